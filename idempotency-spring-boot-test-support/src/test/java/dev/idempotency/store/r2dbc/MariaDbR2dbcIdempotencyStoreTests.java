package dev.idempotency.store.r2dbc;

import dev.idempotency.store.jdbc.JdbcIdempotencyDialect;
import dev.idempotency.store.jdbc.JdbcIdempotencyStore.ReserveCommit;
import dev.idempotency.test.servers.JdbcTestDatabase;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/** The R2DBC store on the MariaDB server at 127.0.0.1:3306, in a database of its own. */
class MariaDbR2dbcIdempotencyStoreTests extends AbstractR2dbcIdempotencyStoreTests {

	@Override
	protected JdbcTestDatabase testDatabase() {
		return JdbcTestDatabase.mariadb();
	}

	@Override
	protected JdbcIdempotencyDialect expectedDialect() {
		return JdbcIdempotencyDialect.MARIADB;
	}

	@Test
	void aBlockingCallOnANonBlockingThreadFails() {
		assertABlockingCallOnANonBlockingThreadFails();
	}

	@Test
	void theAsynchronousCallsNeverBlock() {
		assertTheAsynchronousCallsNeverBlock();
	}

	@Test
	void aReservationMadeAfterItsTimeoutIsReleased() throws Exception {
		assertAReservationMadeAfterItsTimeoutIsReleased("LOCK TABLES " + TABLE + " WRITE", "UNLOCK TABLES");
	}

	/**
	 * There is no per-transaction asynchronous commit here: the default is durable, and
	 * {@code ON} is refused.
	 */
	@Test
	void everyReservationIsDurableAndAnAsynchronousCommitIsRefused() {
		assertThat(store(TABLE).reserveCommit()).isEqualTo(ReserveCommit.OFF);
		assertThatIllegalArgumentException()
			.isThrownBy(() -> R2dbcIdempotencyStore.builder(this.connectionFactory)
				.tableName(TABLE)
				.reserveCommit(ReserveCommit.ON)
				.build())
			.withMessageContaining("PostgreSQL only");
	}

}
