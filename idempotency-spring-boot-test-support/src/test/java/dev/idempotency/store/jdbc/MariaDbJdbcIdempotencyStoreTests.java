package dev.idempotency.store.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import org.junit.jupiter.api.Test;

/** The JDBC store on the MariaDB server at 127.0.0.1:3306, in a database of its own. */
class MariaDbJdbcIdempotencyStoreTests extends AbstractJdbcIdempotencyStoreTests {

	@Override
	protected JdbcTestDatabase testDatabase() {
		return JdbcTestDatabase.mariadb();
	}

	@Override
	protected JdbcIdempotencyDialect expectedDialect() {
		return JdbcIdempotencyDialect.MARIADB;
	}

	/**
	 * The second recording's {@code INSERT} waits for the first's uncommitted row (its
	 * duplicate check).
	 */
	@Test
	void aRecordingInACallersTransactionWaitsForAnEarlierOne() throws Exception {
		assertARecordingInACallersTransactionWaitsForAnEarlierOne("SELECT CONNECTION_ID()",
				"SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_mysql_thread_id = :session AND trx_state = 'LOCK WAIT'");
	}

	/**
	 * MariaDB lets a session set its own clock: {@code SET timestamp} fixes what
	 * {@code NOW()} and {@code UTC_TIMESTAMP()} return in that session (here, two hours
	 * ahead of the real time), while the JVM's clock and the other sessions' are
	 * untouched.
	 */
	@Test
	void leasesFollowTheDatabaseClock() {
		try (HikariDataSource ahead = this.database.dataSource(2, "SET @@timestamp = UNIX_TIMESTAMP(NOW(6)) + 7200")) {
			assertLeasesFollowTheDatabaseClock(ahead);
		}
	}

	/**
	 * Times are stored as UTC {@code DATETIME(6)}: a session in another time zone reads
	 * and judges the same instants.
	 */
	@Test
	void theSessionTimeZoneDoesNotMoveLeases() {
		try (HikariDataSource otherZone = this.database.dataSource(2, "SET time_zone = '+05:00'")) {
			JdbcIdempotencyStore zoned = store(otherZone, TABLE, false);
			dev.idempotency.store.RecordId id = newId();
			this.store.reserve(request(id, "fp", token(), LONG_LEASE));
			org.assertj.core.api.Assertions.assertThat(zoned.find(id).orElseThrow().leaseExpiresAt())
				.isEqualTo(this.store.find(id).orElseThrow().leaseExpiresAt());
			org.assertj.core.api.Assertions.assertThat(zoned.reserve(request(id, "fp", token(), LONG_LEASE)))
				.as("the live lease is live in every zone")
				.isInstanceOf(dev.idempotency.store.ReserveResult.Existing.class);
		}
	}

}
