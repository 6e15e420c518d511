package dev.idempotency.web.atomic;

import java.net.URI;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.idempotency.test.TestKeys;
import dev.idempotency.test.servers.JdbcTestDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Atomic completion of the HTTP door on PostgreSQL; also a commit that fails, made to
 * fail by a deferred constraint trigger on the business table that raises at commit time,
 * with the SQLState of the test's flag row while it exists.
 */
class PostgresAtomicCompletionOverHttpTests extends AbstractAtomicCompletionOverHttpTests {

	@Override
	protected JdbcTestDatabase database() {
		return JdbcTestDatabase.postgres();
	}

	/**
	 * How each failure of the commit itself is answered: the application's own (a
	 * deferred check of its writes, here a deferred trigger on its table raising a unique
	 * violation or an error of its own) as the application answers it, a failure of the
	 * database ({@code disk_full}, class 53) as the store's.
	 */
	@ParameterizedTest
	@CsvSource({ "LEASE, 23505, 409, duplicate thing", "RECORD_AFTER_SUCCESS, 23505, 409, duplicate thing",
			"LEASE, P0001, 500, Internal Server Error", "RECORD_AFTER_SUCCESS, P0001, 500, Internal Server Error",
			"LEASE, 53100, 503, store-unavailable", "RECORD_AFTER_SUCCESS, 53100, 503, store-unavailable" })
	void aCommitThatFailsTakesTheRowAndTheRecordWithItAndTheKeyIsFree(Mode mode, String sqlState, int status,
			String answer) throws Exception {
		List<URI> nodes = nodes(mode);
		this.jdbc.sql("CREATE TABLE IF NOT EXISTS refuse_commit (sql_state VARCHAR(5))").update();
		this.jdbc.sql("""
				CREATE OR REPLACE FUNCTION refuse_commit() RETURNS trigger LANGUAGE plpgsql AS $$
				DECLARE
					state VARCHAR(5);
				BEGIN
					SELECT sql_state INTO state FROM refuse_commit LIMIT 1;
					IF state IS NOT NULL THEN
						RAISE EXCEPTION 'the test refuses this commit' USING ERRCODE = state;
					END IF;
					RETURN NULL;
				END $$""").update();
		this.jdbc.sql("DROP TRIGGER IF EXISTS thing_refuse_commit ON thing").update();
		this.jdbc
			.sql("CREATE CONSTRAINT TRIGGER thing_refuse_commit AFTER INSERT ON thing"
					+ " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_commit()")
			.update();
		String key = TestKeys.newKey();
		double released = executions(mode, "released");
		double storeErrors = executions(mode, "store_error");
		this.jdbc.sql("INSERT INTO refuse_commit (sql_state) VALUES (?)").param(sqlState).update();
		HttpResponse<String> refused;
		try {
			refused = send(post(nodes.get(0), key, "a thing"));
		}
		finally {
			this.jdbc.sql("DELETE FROM refuse_commit").update();
		}
		assertThat(refused.statusCode()).as(refused.body()).isEqualTo(status);
		assertThat(refused.body()).contains(answer);
		boolean storeFailed = sqlState.startsWith("53");
		assertThat(refused.headers().firstValue("Retry-After").isPresent()).isEqualTo(storeFailed);
		assertThat(AtomicTestApplication.runs(key)).as("it ran and inserted").isEqualTo(1);
		assertThat(rows(key)).as("its insert was rolled back").isEmpty();
		assertThat(recordStates(key)).as("the key is free").isEmpty();
		assertThat(executions(mode, "store_error")).isEqualTo(storeErrors + (storeFailed ? 1 : 0));
		assertThat(executions(mode, "released")).isEqualTo(released + (storeFailed ? 0 : 1));
		HttpResponse<String> retry = send(post(nodes.get(1), key, "a thing"));
		assertThat(retry.statusCode()).isEqualTo(201);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(rows(key)).singleElement().satisfies((run) -> assertThat(retry.body()).contains(run));
		assertThat(recordStates(key)).containsExactly("COMPLETED");
	}

	/**
	 * Attempts of one request that race in record-after-success mode, each inserting the
	 * key into a table whose unique constraint is checked at the commit: the first to
	 * commit waits there for another's transaction, which waits to insert its record
	 * behind the first's, and PostgreSQL ends the deadlock by rolling one back (SQLState
	 * 40P01). Nothing ran twice; both attempts are answered with the one recorded answer,
	 * none with a failure, and none is counted as the store's error.
	 */
	@Test
	void racingAttemptsThatDeadlockAtTheCommitAreEachAnsweredWithTheRecordedAnswer() throws Exception {
		List<URI> nodes = nodes(Mode.RECORD_AFTER_SUCCESS);
		this.jdbc
			.sql("CREATE TABLE IF NOT EXISTS unique_at_commit (idem_key VARCHAR(64),"
					+ " CONSTRAINT unique_at_commit_key UNIQUE (idem_key) DEFERRABLE INITIALLY DEFERRED)")
			.update();
		for (int round = 0; round < 3; round++) {
			String key = TestKeys.newKey();
			double storeErrors = executions(Mode.RECORD_AFTER_SUCCESS, "store_error");
			List<CompletableFuture<HttpResponse<String>>> sent = new ArrayList<>();
			// Two: PostgreSQL settles one deadlock per deadlock_timeout (1 s); a third
			// attempt's insert would wait for the second settlement, past the store's
			// query-timeout (2 s) on a loaded machine (docs/jdbc-store.md).
			for (int i = 0; i < 2; i++) {
				sent.add(this.http.sendAsync(post(nodes.get(i % 2), key, "a thing").header("X-Sleep", "300")
					.header("X-Unique-At-Commit", "yes")
					.build(), HttpResponse.BodyHandlers.ofString()));
			}
			List<HttpResponse<String>> answers = new ArrayList<>();
			for (CompletableFuture<HttpResponse<String>> answer : sent) {
				answers.add(answer.get(60, TimeUnit.SECONDS));
			}
			assertThat(answers)
				.allSatisfy((answer) -> assertThat(answer.statusCode()).as(answer.body()).isEqualTo(201));
			assertThat(answers).extracting(HttpResponse::body)
				.as("one answer for all")
				.containsOnly(answers.get(0).body());
			assertThat(rows(key)).as("one business row, the one answered")
				.singleElement()
				.satisfies((run) -> assertThat(answers.get(0).body()).contains(run));
			assertThat(recordStates(key)).containsExactly("COMPLETED");
			assertThat(executions(Mode.RECORD_AFTER_SUCCESS, "store_error")).as("no store error counted")
				.isEqualTo(storeErrors);
		}
	}

}
