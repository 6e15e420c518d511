package dev.idempotency.store.r2dbc;

import dev.idempotency.store.jdbc.JdbcIdempotencyDialect;
import dev.idempotency.test.servers.JdbcTestDatabase;

/**
 * The R2DBC store on an in-memory H2 database (r2dbc-h2), whose driver runs the embedded
 * database on the calling thread: its calls block, and the non-blocking tests run on
 * PostgreSQL and MariaDB only.
 */
class H2R2dbcIdempotencyStoreTests extends AbstractR2dbcIdempotencyStoreTests {

	@Override
	protected JdbcTestDatabase testDatabase() {
		return JdbcTestDatabase.h2();
	}

	@Override
	protected JdbcIdempotencyDialect expectedDialect() {
		return JdbcIdempotencyDialect.H2;
	}

	@Override
	protected boolean nonBlockingDriver() {
		return false;
	}

}
