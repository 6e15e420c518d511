package dev.idempotency.sample.catalog;

import java.sql.SQLException;

import dev.idempotency.sample.catalog.support.JdbcStores;
import org.junit.jupiter.api.AfterAll;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** {@link ScanPlanExpiryTests} on MariaDB, in a database of this class's own. */
class ScanPlanExpiryOnMariaDbTests extends ScanPlanExpiryTests {

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
