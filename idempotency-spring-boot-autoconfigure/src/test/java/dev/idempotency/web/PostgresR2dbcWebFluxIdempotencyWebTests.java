package dev.idempotency.web;

import dev.idempotency.test.servers.JdbcTestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.r2dbc.autoconfigure.R2dbcAutoConfiguration;
import org.springframework.context.annotation.Import;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link WebFluxIdempotencyWebTests} on the R2DBC store on PostgreSQL (a schema of this
 * run's own): a non-blocking store, its calls made in place on the event loop, with
 * BlockHound installed. Boot's ConnectionFactory from {@code spring.r2dbc.*}.
 */
@Import(R2dbcAutoConfiguration.class)
class PostgresR2dbcWebFluxIdempotencyWebTests extends WebFluxIdempotencyWebTests {

	private static final JdbcTestDatabase DATABASE = R2dbcWebTestDatabases.create(JdbcTestDatabase.postgres());

	@DynamicPropertySource
	static void store(DynamicPropertyRegistry registry) {
		R2dbcWebTestDatabases.storeProperties(registry, DATABASE);
	}

	@AfterAll
	static void dropDatabase() throws Exception {
		DATABASE.drop();
	}

	/**
	 * The store says it does not block: the door calls it in place on the event loop,
	 * where any blocking call fails the test.
	 */
	@Test
	void theStoreIsCalledInPlaceOnTheEventLoop() {
		assertThat(this.store.isBlocking()).isFalse();
	}

}
