package dev.idempotency.store.r2dbc;

import dev.idempotency.store.jdbc.JdbcIdempotencyDialect;
import dev.idempotency.test.servers.JdbcTestDatabase;
import org.junit.jupiter.api.Test;

/** The R2DBC store on the PostgreSQL server at 127.0.0.1:5432, in a schema of its own. */
class PostgresR2dbcIdempotencyStoreTests extends AbstractR2dbcIdempotencyStoreTests {

	@Override
	protected JdbcTestDatabase testDatabase() {
		return JdbcTestDatabase.postgres();
	}

	@Override
	protected JdbcIdempotencyDialect expectedDialect() {
		return JdbcIdempotencyDialect.POSTGRESQL;
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
		assertAReservationMadeAfterItsTimeoutIsReleased("LOCK TABLE " + TABLE + " IN ACCESS EXCLUSIVE MODE", null);
	}

}
