package dev.idempotency.store.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.Test;

/** The JDBC store on the PostgreSQL server at 127.0.0.1:5432, in a schema of its own. */
class PostgresJdbcIdempotencyStoreTests extends AbstractJdbcIdempotencyStoreTests {

	@Override
	protected JdbcTestDatabase testDatabase() {
		return JdbcTestDatabase.postgres();
	}

	@Override
	protected JdbcIdempotencyDialect expectedDialect() {
		return JdbcIdempotencyDialect.POSTGRESQL;
	}

	/**
	 * PostgreSQL's {@code now()} cannot be set, but it can be shadowed: with {@code pg_catalog}
	 * named explicitly after the test schema in the search path, the unqualified {@code now()} in
	 * the store's SQL resolves to the test schema's {@code now()}, which runs two hours ahead.
	 * The ordinary sessions (search path: the test schema only, {@code pg_catalog} implicitly
	 * first) keep the real clock.
	 */
	@Test
	void leasesFollowTheDatabaseClock() {
		jdbc().sql("CREATE FUNCTION " + this.database.name() + ".now() RETURNS timestamptz LANGUAGE sql STABLE"
				+ " AS 'SELECT pg_catalog.now() + interval ''2 hours'''").update();
		try (HikariDataSource ahead = this.database.dataSource(2,
				"SET search_path TO " + this.database.name() + ", pg_catalog")) {
			assertLeasesFollowTheDatabaseClock(ahead);
		}
	}

}
