package dev.idempotency.sample.catalog;

import java.sql.SQLException;

import dev.idempotency.sample.catalog.support.JdbcStores;
import org.junit.jupiter.api.AfterAll;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * {@link CatalogTransactionTests} with the catalog and the JDBC store in a MariaDB
 * database of this class's own on 127.0.0.1:3306, dropped at the end. The lock-window
 * cases see the commit wait on the test's row lock in {@code SHOW ENGINE INNODB STATUS}
 * (why not {@code INNODB_TRX}: {@link CatalogTransactionTests}).
 * <p>
 * Looped beside other load: on 2026-12-05, 25 runs of 25 green beside two
 * 10,000-operation chaos runs and other builds (load averages 5 to 29 on 2 cores); with
 * the earlier {@code INNODB_TRX} witness, 3 runs of 3 failed (the commit never seen
 * waiting, or seen only after it had waited out {@code innodb_lock_wait_timeout} and been
 * answered 500): <pre>
 * for i in $(seq 25); do ./mvnw -o -q -pl sample-catalog-app -am -Dtest=CatalogTransactionOnMariaDbTests \
 *   -Dsurefire.failIfNoSpecifiedTests=false test || break; done
 * </pre>
 */
class CatalogTransactionOnMariaDbTests extends CatalogTransactionTests {

	/** The database of the class running now (test classes run one after another). */
	private static JdbcStores.Store database;

	@DynamicPropertySource
	static void catalogAndStore(DynamicPropertyRegistry registry) throws SQLException {
		database = JdbcStores.mariadb(registry);
	}

	@AfterAll
	static void dropDatabase() throws SQLException {
		database.drop();
	}

	@Override
	String expectedDatabase() {
		return "MariaDB";
	}

}
