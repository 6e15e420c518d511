package dev.idempotency.sample.catalog;

import java.sql.SQLException;

import dev.idempotency.sample.catalog.support.JdbcStores;
import org.junit.jupiter.api.AfterAll;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The sample's MariaDB configuration: the catalog and the JDBC store in one database of
 * this context's own on the shared server (127.0.0.1:3306), which the class drops at the
 * end. Lease mode; {@link MariaDbStoreRecordAfterSuccessTests} runs the same in
 * record-after-success mode, in a database of its own.
 */
class MariaDbStoreEndToEndTests extends SharedStoreEndToEndTests {

	/** The database of the class running now (test classes run one after another). */
	private static JdbcStores.Store database;

	@DynamicPropertySource
	static void store(DynamicPropertyRegistry registry) throws SQLException {
		database = JdbcStores.mariadb(registry);
	}

	@AfterAll
	static void dropDatabase() throws SQLException {
		database.drop();
	}

	@Override
	String expectedStore() {
		return "jdbc";
	}

	@Override
	protected long recordsInStore() {
		return database.records();
	}

}
