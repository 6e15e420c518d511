package dev.idempotency.sample.catalog;

import java.sql.SQLException;

import dev.idempotency.sample.catalog.support.JdbcStores;
import org.junit.jupiter.api.AfterAll;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * {@link ScanPlanningTests} with the catalog, its plans and the JDBC store in a MariaDB
 * database of this class's own (127.0.0.1:3306, dropped at the end): the plan tables'
 * MariaDB statements.
 */
class ScanPlanningOnMariaDbTests extends ScanPlanningTests {

	private static JdbcStores.Store database;

	@DynamicPropertySource
	static void store(DynamicPropertyRegistry registry) throws SQLException {
		database = JdbcStores.mariadb(registry);
	}

	@AfterAll
	static void dropDatabase() throws SQLException {
		database.drop();
	}

}
