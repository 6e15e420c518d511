package dev.idempotency.actuate;

import java.sql.SQLException;

import dev.idempotency.test.servers.JdbcTestDatabase;
import org.junit.jupiter.api.AfterAll;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * {@link IdempotencyEndpointOverHttpTests} on the shared PostgreSQL, in a schema of this
 * run's own.
 */
class PostgresIdempotencyEndpointOverHttpTests extends IdempotencyEndpointOverHttpTests {

	private static JdbcTestDatabase schema;

	@DynamicPropertySource
	static void store(DynamicPropertyRegistry registry) throws SQLException {
		schema = JdbcTestDatabase.postgres().create();
		schema.registerAsApplicationStore(registry);
	}

	@AfterAll
	static void dropSchema() throws SQLException {
		schema.drop();
	}

}
