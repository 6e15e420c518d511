package dev.idempotency.store.jdbc;

import dev.idempotency.test.servers.JdbcTestDatabase;

/**
 * The JDBC store on an in-memory H2 database. H2 runs inside the JVM, so its clock is the
 * JVM's: the database-clock test runs on PostgreSQL and MariaDB only.
 */
class H2JdbcIdempotencyStoreTests extends AbstractJdbcIdempotencyStoreTests {

	@Override
	protected JdbcTestDatabase testDatabase() {
		return JdbcTestDatabase.h2();
	}

	@Override
	protected JdbcIdempotencyDialect expectedDialect() {
		return JdbcIdempotencyDialect.H2;
	}

}
