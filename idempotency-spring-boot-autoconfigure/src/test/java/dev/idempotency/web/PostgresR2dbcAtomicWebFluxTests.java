package dev.idempotency.web;

import java.time.Duration;
import java.util.List;

import dev.idempotency.test.TestKeys;
import dev.idempotency.test.servers.JdbcTestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.r2dbc.autoconfigure.R2dbcAutoConfiguration;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link AbstractR2dbcAtomicWebFluxTests} on PostgreSQL (a schema of this run's own). */
@Import(R2dbcAutoConfiguration.class)
class PostgresR2dbcAtomicWebFluxTests extends AbstractR2dbcAtomicWebFluxTests {

	private static final JdbcTestDatabase DATABASE = R2dbcWebTestDatabases.create(JdbcTestDatabase.postgres());

	@DynamicPropertySource
	static void store(DynamicPropertyRegistry registry) {
		R2dbcWebTestDatabases.storeProperties(registry, DATABASE);
		registry.add("idempotency.store.r2dbc.initialize-schema", () -> "always");
	}

	@AfterAll
	static void dropDatabase() throws Exception {
		DATABASE.drop();
	}

	/**
	 * The reservation of a run that completes atomically commits without waiting for its
	 * WAL flush ({@code synchronous_commit} off in its own transaction only): the
	 * handler's transaction, which records the answer, commits durably after it, and so
	 * does the completion of a handler that wrote nothing and the release of one that
	 * failed. A trigger logs the setting each write of a key committed under.
	 */
	@Test
	void theReservationOfAnAtomicRunCommitsAsynchronouslyAndWhatEndsItDurably() {
		sql("CREATE TABLE IF NOT EXISTS sync_log (seq BIGSERIAL PRIMARY KEY, idem_key TEXT, op TEXT, setting TEXT)");
		sql("CREATE OR REPLACE FUNCTION sync_observe() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
				+ " INSERT INTO sync_log (idem_key, op, setting) VALUES (CASE WHEN TG_OP = 'DELETE' THEN OLD.idem_key"
				+ " ELSE NEW.idem_key END, TG_OP, current_setting('synchronous_commit')); RETURN NULL; END $$");
		sql("DROP TRIGGER IF EXISTS sync_observed ON idempotency_record");
		sql("CREATE TRIGGER sync_observed AFTER INSERT OR UPDATE OR DELETE ON idempotency_record"
				+ " FOR EACH ROW EXECUTE FUNCTION sync_observe()");
		try {
			// The first protected request finds out whether the store joins the door's
			// transactions; until then reservations are durable.
			assertThat(post("/atomic/orders", TestKeys.newKey()).getStatus()).isEqualTo(HttpStatus.CREATED);
			String recorded = TestKeys.newKey();
			assertThat(post("/atomic/orders", recorded).getStatus()).isEqualTo(HttpStatus.CREATED);
			String alone = TestKeys.newKey();
			assertThat(post("/atomic/nothing", alone).getStatus()).isEqualTo(HttpStatus.CREATED);
			String failed = TestKeys.newKey();
			Orders.failNext.set(true);
			assertThat(post("/atomic/orders", failed).getStatus()).isEqualTo(HttpStatus.INTERNAL_SERVER_ERROR);

			assertThat(log(recorded)).as("recorded in the handler's transaction")
				.containsExactly("INSERT off", "UPDATE on");
			assertThat(log(alone)).as("a handler that wrote nothing: recorded alone")
				.containsExactly("INSERT off", "UPDATE on");
			assertThat(log(failed)).as("a failed handler: released").containsExactly("INSERT off", "DELETE on");
		}
		finally {
			sql("DROP TRIGGER IF EXISTS sync_observed ON idempotency_record");
			sql("DROP TABLE IF EXISTS sync_log");
		}
	}

	private void sql(String sql) {
		this.database.sql(sql).then().block(Duration.ofSeconds(10));
	}

	private List<String> log(String key) {
		return this.database.sql("SELECT op, setting FROM sync_log WHERE idem_key = :key ORDER BY seq")
			.bind("key", key)
			.map((row, metadata) -> row.get("op", String.class) + " " + row.get("setting", String.class))
			.all()
			.collectList()
			.block(Duration.ofSeconds(10));
	}

}
