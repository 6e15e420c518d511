package dev.idempotency.store.r2dbc;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.autoconfigure.jdbc.JdbcStoreTestSupport;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.ReserveRequest;
import dev.idempotency.store.ReserveResult;
import dev.idempotency.store.jdbc.JdbcIdempotencyDialect;
import dev.idempotency.store.jdbc.JdbcIdempotencyStore.ReserveCommit;
import dev.idempotency.test.servers.JdbcTestDatabase;
import io.r2dbc.pool.ConnectionPool;
import org.junit.jupiter.api.Test;

import org.springframework.r2dbc.core.DatabaseClient;

import static org.assertj.core.api.Assertions.assertThat;

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

	/**
	 * Which reservations commit without waiting for their WAL flush, as the JDBC store's:
	 * by default only one whose run completes atomically, with {@code ON} every one, with
	 * {@code OFF} none; completion and release stay durable, and the pooled connection
	 * keeps its default. A trigger logs the setting each write committed under; the pool
	 * has one connection.
	 */
	@Test
	void aReservationCommitsAsynchronouslyWhereItsReserveCommitSays() throws Exception {
		String table = "sync_probe";
		try (HikariDataSource admin = this.database.dataSource(1)) {
			assertThat(JdbcStoreTestSupport.createSchema(admin, table)).isTrue();
			try (Connection connection = admin.getConnection(); Statement ddl = connection.createStatement()) {
				ddl.execute("CREATE TABLE sync_log (seq BIGSERIAL PRIMARY KEY, op TEXT, setting TEXT, pid INT)");
				ddl.execute("CREATE FUNCTION sync_observe() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
						+ " INSERT INTO sync_log (op, setting, pid) VALUES (TG_OP,"
						+ " current_setting('synchronous_commit'), pg_backend_pid()); RETURN NULL; END $$");
				ddl.execute("CREATE TRIGGER sync_observed AFTER INSERT OR UPDATE OR DELETE ON " + table
						+ " FOR EACH ROW EXECUTE FUNCTION sync_observe()");
			}
		}
		ConnectionPool single = pool(1);
		try {
			R2dbcIdempotencyStore byDefault = probe(single, table, null);
			R2dbcIdempotencyStore every = probe(single, table, ReserveCommit.ON);
			R2dbcIdempotencyStore none = probe(single, table, ReserveCommit.OFF);
			assertThat(byDefault.reserveCommit()).isEqualTo(ReserveCommit.WITH_ATOMIC_COMPLETION);

			RecordId atomic = newId();
			String owner = token();
			assertThat(byDefault.reserve(atomic(request(atomic, "fp", owner, LONG_LEASE))))
				.isInstanceOf(ReserveResult.Acquired.class);
			assertThat(byDefault.complete(atomic, owner, response(201, "{}"))).isTrue();
			assertThat(byDefault.reserve(request(newId(), "fp", token(), LONG_LEASE)))
				.isInstanceOf(ReserveResult.Acquired.class);
			RecordId released = newId();
			String releasing = token();
			assertThat(every.reserve(request(released, "fp", releasing, LONG_LEASE)))
				.isInstanceOf(ReserveResult.Acquired.class);
			assertThat(every.release(released, releasing)).isTrue();
			assertThat(none.reserve(atomic(request(newId(), "fp", token(), LONG_LEASE))))
				.isInstanceOf(ReserveResult.Acquired.class);

			DatabaseClient client = DatabaseClient.create(single);
			List<String> observed = client.sql("SELECT op, setting FROM sync_log ORDER BY seq")
				.map((row, metadata) -> row.get("op", String.class) + " " + row.get("setting", String.class))
				.all()
				.collectList()
				.block(Duration.ofSeconds(10));
			assertThat(observed).containsExactly("INSERT off", "UPDATE on", "INSERT on", "INSERT off", "DELETE on",
					"INSERT on");
			assertThat(client.sql("SHOW synchronous_commit")
				.map((row, metadata) -> row.get(0, String.class))
				.one()
				.block(Duration.ofSeconds(10))).as("the pooled connection keeps the default").isEqualTo("on");
			assertThat(
					client.sql("SELECT COUNT(DISTINCT pid) = 1 AND MIN(pid) = pg_backend_pid() AS same FROM sync_log")
						.map((row, metadata) -> row.get("same", Boolean.class))
						.one()
						.block(Duration.ofSeconds(10)))
				.as("every write came through this same connection")
				.isTrue();
		}
		finally {
			single.disposeLater().block(Duration.ofSeconds(10));
		}
	}

	private static R2dbcIdempotencyStore probe(ConnectionPool connections, String table,
			@org.jspecify.annotations.Nullable ReserveCommit reserveCommit) {
		R2dbcIdempotencyStore.Builder builder = R2dbcIdempotencyStore.builder(connections)
			.tableName(table)
			.timeout(Duration.ofSeconds(10));
		return ((reserveCommit != null) ? builder.reserveCommit(reserveCommit) : builder).build();
	}

	private static ReserveRequest atomic(ReserveRequest request) {
		return new ReserveRequest(request.id(), request.fingerprint(), request.operation(), request.ownerToken(),
				request.lease(), request.retention(), true);
	}

}
