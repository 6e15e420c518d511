package dev.idempotency.store.r2dbc;

import dev.idempotency.store.jdbc.JdbcIdempotencyDialect;
import dev.idempotency.test.servers.JdbcTestDatabase;
import org.junit.jupiter.api.Test;

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

}
