package dev.idempotency.store.jdbc;

import java.util.Arrays;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.test.servers.JdbcTestDatabase;
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
	 * The second recording's {@code INSERT} waits for the first's uncommitted row: its
	 * duplicate check asks for a shared lock on that record (InnoDB reports
	 * {@code lock mode S locks rec but not gap}), a record lock and no gap lock, so it
	 * waits whatever the isolation level; here {@code REPEATABLE READ}, the server's
	 * default, which neither the pool nor the store changes. It runs on the caller's
	 * connection (transactional completion joins the caller's transaction), so the
	 * waiting session is the one whose {@code CONNECTION_ID()} the caller read. The wait
	 * cannot end before it is seen: the first transaction holds its row until the test
	 * has seen the wait.
	 * <p>
	 * The witness is {@code SHOW ENGINE INNODB STATUS}, which InnoDB writes afresh for
	 * each call, and not {@code information_schema.INNODB_TRX} (or
	 * {@code INNODB_LOCK_WAITS}): those are read from one snapshot for the whole server
	 * that InnoDB refreshes only when nobody has read it for 100 ms
	 * ({@code CACHE_MIN_IDLE_TIME_NS} in {@code trx0i_s.cc}, {@code last_read} set by
	 * each read). Polled every 10 ms, it stayed at the snapshot of the first read, taken
	 * before the second session began to wait whenever that session was slower than the
	 * poller, and the test failed after 30 s with "never waited for a lock"; any other
	 * client polling it as fast on the shared server freezes it the same way.
	 * <p>
	 * 50 runs in a row, under load (CPU busy loops, or another module's tests running);
	 * on 2026-12-04 two loops, 50 of 50 green each, the second with 6 busy loops beside
	 * it (load averages 6 to 19 on 2 cores, mostly 8 and more): <pre>
	 * for i in $(seq 50); do ./mvnw -o -q -pl idempotency-spring-boot-test-support -am \
	 *   -Dtest='MariaDbJdbcIdempotencyStoreTests#aRecordingInACallersTransactionWaitsForAnEarlierOne' \
	 *   -Dsurefire.failIfNoSpecifiedTests=false test || break; done
	 * </pre>
	 */
	@Test
	void aRecordingInACallersTransactionWaitsForAnEarlierOne() throws Exception {
		assertARecordingInACallersTransactionWaitsForAnEarlierOne("SELECT CONNECTION_ID()", this::waitsForLock);
	}

	/**
	 * Whether {@code SHOW ENGINE INNODB STATUS} lists the session's transaction as
	 * {@code LOCK WAIT}: each transaction there is a block that starts with
	 * {@code ---TRANSACTION}, has a {@code LOCK WAIT} line while it waits and names its
	 * session ({@code MariaDB thread id 24, ...}).
	 */
	private boolean waitsForLock(long session) {
		String status = jdbc().sql("SHOW ENGINE INNODB STATUS").query((rs, row) -> rs.getString("Status")).single();
		return Arrays.stream(status.split("\n---TRANSACTION "))
			.anyMatch((transaction) -> transaction.contains("\nLOCK WAIT ")
					&& transaction.contains(" thread id " + session + ","));
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
