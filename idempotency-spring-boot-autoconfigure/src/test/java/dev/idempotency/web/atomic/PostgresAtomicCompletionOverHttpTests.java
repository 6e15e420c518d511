package dev.idempotency.web.atomic;

import java.net.URI;
import java.net.http.HttpResponse;
import java.util.List;

import dev.idempotency.test.TestKeys;
import dev.idempotency.test.servers.JdbcTestDatabase;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Atomic completion of the HTTP door on PostgreSQL; also a commit that fails, made to
 * fail by a deferred constraint trigger on the business table that raises at commit time
 * while the test's flag row exists.
 */
class PostgresAtomicCompletionOverHttpTests extends AbstractAtomicCompletionOverHttpTests {

	@Override
	protected JdbcTestDatabase database() {
		return JdbcTestDatabase.postgres();
	}

	@ParameterizedTest
	@EnumSource
	void aCommitThatFailsTakesTheRowAndTheRecordWithItAndTheKeyIsFree(Mode mode) throws Exception {
		List<URI> nodes = nodes(mode);
		this.jdbc.sql("CREATE TABLE IF NOT EXISTS refuse_commit (why VARCHAR(40))").update();
		this.jdbc.sql("""
				CREATE OR REPLACE FUNCTION refuse_commit() RETURNS trigger LANGUAGE plpgsql AS $$
				BEGIN
					IF EXISTS (SELECT 1 FROM refuse_commit) THEN
						RAISE EXCEPTION 'the test refuses this commit';
					END IF;
					RETURN NULL;
				END $$""").update();
		this.jdbc.sql("DROP TRIGGER IF EXISTS thing_refuse_commit ON thing").update();
		this.jdbc
			.sql("CREATE CONSTRAINT TRIGGER thing_refuse_commit AFTER INSERT ON thing"
					+ " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_commit()")
			.update();
		String key = TestKeys.newKey();
		this.jdbc.sql("INSERT INTO refuse_commit (why) VALUES ('test')").update();
		HttpResponse<String> refused;
		try {
			refused = send(post(nodes.get(0), key, "a thing"));
		}
		finally {
			this.jdbc.sql("DELETE FROM refuse_commit").update();
		}
		assertThat(refused.statusCode()).isEqualTo(503);
		assertThat(refused.body()).contains("store-unavailable").contains("nothing was done");
		assertThat(refused.headers().firstValue("Retry-After")).isPresent();
		assertThat(AtomicTestApplication.runs(key)).as("it ran and inserted").isEqualTo(1);
		assertThat(rows(key)).as("its insert was rolled back").isEmpty();
		assertThat(recordStates(key)).as("the key is free").isEmpty();
		HttpResponse<String> retry = send(post(nodes.get(1), key, "a thing"));
		assertThat(retry.statusCode()).isEqualTo(201);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(rows(key)).singleElement().satisfies((run) -> assertThat(retry.body()).contains(run));
		assertThat(recordStates(key)).containsExactly("COMPLETED");
	}

}
