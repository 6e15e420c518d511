package dev.idempotency.web;

import java.sql.SQLException;

import dev.idempotency.test.servers.JdbcTestDatabase;

import org.springframework.test.context.DynamicPropertyRegistry;

/** The R2DBC web suites' databases, one per test class, and how the store reaches one. */
final class R2dbcWebTestDatabases {

	private R2dbcWebTestDatabases() {
	}

	static JdbcTestDatabase create(JdbcTestDatabase database) {
		try {
			return database.create();
		}
		catch (SQLException ex) {
			throw new IllegalStateException("Cannot create the test database " + database.name(), ex);
		}
	}

	/**
	 * The R2DBC store on Boot's ConnectionFactory for {@code database}, a pool large
	 * enough for the suite's 64 racing first requests to wait their turn briefly. The
	 * store's timeout is 10 s, not the default 2 s: the 64 racers' duplicates poll the
	 * store while they wait, each poll waiting for one of the pool's connections, and in
	 * a CI run that tests three modules at once on two cores (load 12) one poll took more
	 * than 2 s and its request was answered {@code 503}, rightly for a store that slow.
	 * These suites check the protocol's answers; the store's timeout has its own tests
	 * (the R2DBC store's contract).
	 */
	static void storeProperties(DynamicPropertyRegistry registry, JdbcTestDatabase database) {
		registry.add("idempotency.store.type", () -> "r2dbc");
		registry.add("spring.r2dbc.url", database::r2dbcUrl);
		registry.add("spring.r2dbc.username", database::user);
		registry.add("spring.r2dbc.pool.max-size", () -> "20");
		registry.add("idempotency.store.r2dbc.timeout", () -> "10s");
	}

}
