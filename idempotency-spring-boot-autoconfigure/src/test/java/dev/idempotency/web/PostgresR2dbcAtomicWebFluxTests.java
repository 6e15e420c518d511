package dev.idempotency.web;

import dev.idempotency.test.servers.JdbcTestDatabase;
import org.junit.jupiter.api.AfterAll;

import org.springframework.boot.r2dbc.autoconfigure.R2dbcAutoConfiguration;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** {@link AbstractR2dbcAtomicWebFluxTests} on PostgreSQL (a schema of this run's own). */
@Import(R2dbcAutoConfiguration.class)
class PostgresR2dbcAtomicWebFluxTests extends AbstractR2dbcAtomicWebFluxTests {

	private static final JdbcTestDatabase DATABASE = R2dbcWebTestDatabases.create(JdbcTestDatabase.postgres());

	@DynamicPropertySource
	static void store(DynamicPropertyRegistry registry) {
		R2dbcWebTestDatabases.storeProperties(registry, DATABASE);
		registry.add("idempotency.store.r2dbc.initialize-schema", () -> "always");
	}

	@AfterAll
	static void dropDatabase() throws Exception {
		DATABASE.drop();
	}

}
