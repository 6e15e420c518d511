package dev.idempotency.store.jdbc;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.ReserveRequest;
import dev.idempotency.store.ReserveResult;
import dev.idempotency.test.servers.JdbcTestDatabase;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.simple.JdbcClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

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
	 * The second recording's {@code INSERT ... ON CONFLICT} waits for the first's
	 * uncommitted row.
	 */
	@Test
	void aRecordingInACallersTransactionWaitsForAnEarlierOne() throws Exception {
		// pg_stat_activity is read afresh by each statement outside a transaction.
		assertARecordingInACallersTransactionWaitsForAnEarlierOne("SELECT pg_backend_pid()",
				(session) -> jdbc()
					.sql("SELECT COUNT(*) FROM pg_stat_activity WHERE pid = :session AND wait_event_type = 'Lock'")
					.param("session", session)
					.query(Long.class)
					.single() > 0);
	}

	/** The {@code synchronous_commit} a reservation that writes commits with. */
	protected String expectedReserveSynchronousCommit() {
		return "on";
	}

	/**
	 * PostgreSQL's {@code now()} cannot be set, but it can be shadowed: with
	 * {@code pg_catalog} named explicitly after the test schema in the search path, the
	 * unqualified {@code now()} in the store's SQL resolves to the test schema's
	 * {@code now()}, which runs two hours ahead. The ordinary sessions (search path: the
	 * test schema only, {@code pg_catalog} implicitly first) keep the real clock.
	 */
	@Test
	void leasesFollowTheDatabaseClock() {
		jdbc()
			.sql("CREATE FUNCTION " + this.database.name() + ".now() RETURNS timestamptz LANGUAGE sql STABLE"
					+ " AS 'SELECT pg_catalog.now() + interval ''2 hours'''")
			.update();
		try (HikariDataSource ahead = this.database.dataSource(2,
				"SET search_path TO " + this.database.name() + ", pg_catalog")) {
			assertLeasesFollowTheDatabaseClock(ahead);
		}
	}

	/**
	 * Which {@code synchronous_commit} each write of the store ran under, and that none
	 * of it stays on the pooled connection. A trigger on the table records, for every row
	 * the store writes, the setting in effect in that writing transaction and the server
	 * process of the connection. The setting is read at commit, and nothing in the
	 * store's statement changes it after the row is written, so the recorded value is the
	 * one the commit used. The pool has one connection, so every call and the final
	 * {@code SHOW} use the same session.
	 */
	@Test
	void aReservationCommitsWithItsOwnSynchronousCommitAndTheConnectionKeepsTheDefault() throws Exception {
		String table = "sync_probe";
		createSchema(table);
		observeSynchronousCommit(table);
		try (HikariDataSource single = this.database.dataSource(1)) {
			JdbcIdempotencyStore probe = store(single, table, false);
			String reserve = expectedReserveSynchronousCommit();

			RecordId taken = newId();
			assertThat(probe.reserve(request(taken, "fp", token(), SHORT_LEASE)))
				.isInstanceOf(ReserveResult.Acquired.class);
			elapse(SHORT_LEASE);
			String owner = token();
			assertThat(probe.reserve(request(taken, "fp", owner, LONG_LEASE)))
				.isEqualTo(new ReserveResult.Acquired(true));
			assertThat(probe.heartbeat(taken, owner, LONG_LEASE)).isTrue();
			assertThat(probe.complete(taken, owner, response(201, "{}"))).isTrue();
			assertThat(probe.reserve(request(taken, "fp", token(), LONG_LEASE))).as("a replay writes nothing")
				.isInstanceOf(ReserveResult.Existing.class);
			RecordId released = newId();
			String releasing = token();
			probe.reserve(request(released, "fp", releasing, LONG_LEASE));
			assertThat(probe.release(released, releasing)).isTrue();
			assertThat(probe.recordCompleted(completed(newId(), "fp", response(201, "{}"), LONG_LEASE)))
				.as("a recorded response is final: durable")
				.isEmpty();

			assertThat(observed(single, table)).containsExactly("INSERT " + reserve, "UPDATE " + reserve, "UPDATE on",
					"UPDATE on", "INSERT " + reserve, "DELETE on", "INSERT on");
			assertKeepsTheDefaultOnOneConnection(single, table);
		}
	}

	/**
	 * The default of the auto-configuration: only a reservation whose run completes
	 * atomically, in a transaction the store joins, commits asynchronously; one that is
	 * not told so, or told so by a store that does not join, stays durable.
	 */
	@Test
	void withAtomicCompletionOnlyTheReservationsOfAtomicRunsCommitAsynchronously() throws Exception {
		String table = "sync_atomic_probe";
		createSchema(table);
		observeSynchronousCommit(table);
		try (HikariDataSource single = this.database.dataSource(1)) {
			JdbcIdempotencyStore joining = JdbcIdempotencyStore.builder(single)
				.dialect(JdbcIdempotencyDialect.POSTGRESQL)
				.tableName(table)
				.transactionalCompletion(true)
				.queryTimeout(Duration.ZERO)
				.reserveCommit(JdbcIdempotencyStore.ReserveCommit.WITH_ATOMIC_COMPLETION)
				.build();
			JdbcIdempotencyStore dedicated = JdbcIdempotencyStore.builder(single)
				.dialect(JdbcIdempotencyDialect.POSTGRESQL)
				.tableName(table)
				.transactionalCompletion(false)
				.queryTimeout(Duration.ZERO)
				.reserveCommit(JdbcIdempotencyStore.ReserveCommit.WITH_ATOMIC_COMPLETION)
				.build();
			assertThat(joining.reserveCommit()).isEqualTo(JdbcIdempotencyStore.ReserveCommit.WITH_ATOMIC_COMPLETION);
			assertThat(joining.reserveAsynchronousCommit()).isFalse();

			RecordId atomic = newId();
			String owner = token();
			assertThat(joining.reserve(atomic(request(atomic, "fp", owner, LONG_LEASE))))
				.isInstanceOf(ReserveResult.Acquired.class);
			assertThat(joining.complete(atomic, owner, response(201, "{}"))).isTrue();
			assertThat(joining.reserve(request(newId(), "fp", token(), LONG_LEASE)))
				.isInstanceOf(ReserveResult.Acquired.class);
			assertThat(dedicated.reserve(atomic(request(newId(), "fp", token(), LONG_LEASE))))
				.isInstanceOf(ReserveResult.Acquired.class);

			assertThat(observed(single, table)).containsExactly("INSERT off", "UPDATE on", "INSERT on", "INSERT on");
			assertKeepsTheDefaultOnOneConnection(single, table);
		}
	}

	/** On another database the default is durable, and only 'on' fails. */
	@Test
	void withAtomicCompletionIsDurableAndOnFailsOnAnotherDialect() {
		assertThat(JdbcIdempotencyStore.builder(this.dataSource)
			.dialect(JdbcIdempotencyDialect.MARIADB)
			.tableName("t")
			.transactionalCompletion(true)
			.queryTimeout(Duration.ZERO)
			.reserveCommit(JdbcIdempotencyStore.ReserveCommit.WITH_ATOMIC_COMPLETION)
			.build()
			.reserveCommit()).isEqualTo(JdbcIdempotencyStore.ReserveCommit.OFF);
		assertThatIllegalArgumentException()
			.isThrownBy(() -> JdbcIdempotencyStore.builder(this.dataSource)
				.dialect(JdbcIdempotencyDialect.MARIADB)
				.tableName("t")
				.transactionalCompletion(true)
				.queryTimeout(Duration.ZERO)
				.reserveCommit(JdbcIdempotencyStore.ReserveCommit.ON)
				.build())
			.withMessageContaining("PostgreSQL only");
	}

	private static ReserveRequest atomic(ReserveRequest request) {
		return new ReserveRequest(request.id(), request.fingerprint(), request.operation(), request.ownerToken(),
				request.lease(), request.retention(), true);
	}

	private void observeSynchronousCommit(String table) throws Exception {
		try (Connection admin = this.dataSource.getConnection(); Statement ddl = admin.createStatement()) {
			ddl.execute(
					"CREATE TABLE IF NOT EXISTS sync_log (seq BIGSERIAL PRIMARY KEY, tab TEXT, op TEXT, setting TEXT, pid INT)");
			ddl.execute("CREATE OR REPLACE FUNCTION sync_observe() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
					+ " INSERT INTO sync_log (tab, op, setting, pid) VALUES (TG_TABLE_NAME, TG_OP,"
					+ " current_setting('synchronous_commit'), pg_backend_pid()); RETURN NULL; END $$");
			ddl.execute("CREATE TRIGGER " + table + "_observed AFTER INSERT OR UPDATE OR DELETE ON " + table
					+ " FOR EACH ROW EXECUTE FUNCTION sync_observe()");
		}
	}

	/**
	 * None of the setting stays on the pooled connection, and every write came through it
	 * (the pool has one connection).
	 */
	private static void assertKeepsTheDefaultOnOneConnection(DataSource single, String table) throws Exception {
		try (Connection connection = single.getConnection(); Statement statement = connection.createStatement()) {
			try (ResultSet show = statement.executeQuery("SHOW synchronous_commit")) {
				show.next();
				assertThat(show.getString(1)).as("the pooled connection keeps the default").isEqualTo("on");
			}
			try (ResultSet processes = statement
				.executeQuery("SELECT COUNT(DISTINCT pid) = 1 AND MIN(pid) = pg_backend_pid() FROM sync_log"
						+ " WHERE tab = '" + table + "'")) {
				processes.next();
				assertThat(processes.getBoolean(1)).as("every write came through this same connection").isTrue();
			}
		}
	}

	private static List<String> observed(DataSource dataSource, String table) {
		return JdbcClient.create(dataSource)
			.sql("SELECT op || ' ' || setting FROM sync_log WHERE tab = :table ORDER BY seq")
			.param("table", table)
			.query(String.class)
			.list();
	}

}
