package dev.idempotency.store.jdbc;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.List;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.ReserveResult;
import org.junit.jupiter.api.Test;

import org.springframework.jdbc.core.simple.JdbcClient;

import static org.assertj.core.api.Assertions.assertThat;

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
		try (Connection admin = this.dataSource.getConnection(); Statement ddl = admin.createStatement()) {
			ddl.execute("CREATE TABLE sync_log (seq BIGSERIAL PRIMARY KEY, op TEXT, setting TEXT, pid INT)");
			ddl.execute("CREATE FUNCTION sync_observe() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
					+ " INSERT INTO sync_log (op, setting, pid)"
					+ " VALUES (TG_OP, current_setting('synchronous_commit'), pg_backend_pid()); RETURN NULL; END $$");
			ddl.execute("CREATE TRIGGER sync_probe_observed AFTER INSERT OR UPDATE OR DELETE ON " + table
					+ " FOR EACH ROW EXECUTE FUNCTION sync_observe()");
		}
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

			assertThat(observed(single)).containsExactly("INSERT " + reserve, "UPDATE " + reserve, "UPDATE on",
					"UPDATE on", "INSERT " + reserve, "DELETE on", "INSERT on");
			try (Connection connection = single.getConnection(); Statement statement = connection.createStatement()) {
				try (ResultSet show = statement.executeQuery("SHOW synchronous_commit")) {
					show.next();
					assertThat(show.getString(1)).as("the pooled connection keeps the default").isEqualTo("on");
				}
				try (ResultSet processes = statement
					.executeQuery("SELECT COUNT(DISTINCT pid) = 1 AND MIN(pid) = pg_backend_pid() FROM sync_log")) {
					processes.next();
					assertThat(processes.getBoolean(1)).as("every write came through this same connection").isTrue();
				}
			}
		}
	}

	private static List<String> observed(DataSource dataSource) {
		return JdbcClient.create(dataSource)
			.sql("SELECT op || ' ' || setting FROM sync_log ORDER BY seq")
			.query(String.class)
			.list();
	}

}
