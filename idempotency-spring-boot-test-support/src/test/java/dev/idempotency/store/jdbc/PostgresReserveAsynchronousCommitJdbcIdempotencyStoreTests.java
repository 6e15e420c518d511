package dev.idempotency.store.jdbc;

import java.time.Duration;

import javax.sql.DataSource;

/**
 * The JDBC store on PostgreSQL with reservations that commit without waiting for their
 * WAL flush: the whole contract and every PostgreSQL test again, and the reservation's
 * writes must commit with {@code synchronous_commit = off} while everything else stays
 * durable.
 */
class PostgresReserveAsynchronousCommitJdbcIdempotencyStoreTests extends PostgresJdbcIdempotencyStoreTests {

	@Override
	protected JdbcIdempotencyStore store(DataSource dataSource, String table, boolean transactionalCompletion) {
		return JdbcIdempotencyStore.builder(dataSource)
			.dialect(expectedDialect())
			.tableName(table)
			.transactionalCompletion(transactionalCompletion)
			.queryTimeout(Duration.ZERO)
			.reserveCommit(JdbcIdempotencyStore.ReserveCommit.ON)
			.build();
	}

	@Override
	protected String expectedReserveSynchronousCommit() {
		return "off";
	}

}
