package dev.idempotency.sample.catalog;

import java.sql.SQLException;

import dev.idempotency.sample.catalog.support.JdbcStores;
import org.junit.jupiter.api.AfterAll;

import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * {@link LostResponseTests} in the sample's PostgreSQL configuration: the catalog and the
 * JDBC store in one database of this context's own on the shared server, which the class
 * drops at the end. Lease mode; {@link LostResponseOnPostgresRecordAfterSuccessTests}
 * runs the same in record-after-success mode.
 */
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class LostResponseOnPostgresTests extends LostResponseTests {

	/** The database of the class running now (test classes run one after another). */
	private static JdbcStores.Store database;

	@DynamicPropertySource
	static void store(DynamicPropertyRegistry registry) throws SQLException {
		database = JdbcStores.postgres(registry);
	}

	@AfterAll
	static void dropSchema() throws SQLException {
		database.drop();
	}

}
