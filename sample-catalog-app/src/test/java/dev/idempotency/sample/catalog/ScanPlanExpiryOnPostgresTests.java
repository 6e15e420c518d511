package dev.idempotency.sample.catalog;

import java.sql.SQLException;

import dev.idempotency.sample.catalog.support.JdbcStores;
import org.junit.jupiter.api.AfterAll;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** {@link ScanPlanExpiryTests} on PostgreSQL, in a database of this class's own. */
class ScanPlanExpiryOnPostgresTests extends ScanPlanExpiryTests {

	private static JdbcStores.Store database;

	@DynamicPropertySource
	static void store(DynamicPropertyRegistry registry) throws SQLException {
		database = JdbcStores.postgres(registry);
	}

	@AfterAll
	static void dropDatabase() throws SQLException {
		database.drop();
	}

}
