package dev.idempotency.sample.catalog;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

import javax.sql.DataSource;

import dev.idempotency.sample.catalog.support.CatalogHttp;
import dev.idempotency.sample.catalog.support.JdbcStores;
import org.apache.iceberg.rest.RESTUtil;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * {@link CatalogTransactionTests} with the catalog and the JDBC store in a PostgreSQL
 * database of this class's own on 127.0.0.1:5432, dropped at the end. Plus: a keyed
 * {@code createNamespace} whose commit fails (a deferred constraint trigger on the
 * records table refuses the completed record at commit time) leaves neither the namespace
 * nor a record, and the retry with the same key creates it once.
 */
class CatalogTransactionOnPostgresTests extends CatalogTransactionTests {

	/** The database of the class running now (test classes run one after another). */
	private static JdbcStores.Store database;

	@Autowired
	private DataSource dataSource;

	@DynamicPropertySource
	static void catalogAndStore(DynamicPropertyRegistry registry) throws SQLException {
		database = JdbcStores.postgres(registry);
	}

	@AfterAll
	static void dropDatabase() throws SQLException {
		database.drop();
	}

	@Override
	String expectedDatabase() {
		return "PostgreSQL";
	}

	@Test
	void aCreateNamespaceWhoseRecordCannotCommitLeavesNoNamespaceAndItsRetryCreatesItOnce() throws SQLException {
		execute("CREATE TABLE refuse_commit (why VARCHAR(40))", """
				CREATE FUNCTION refuse_completed_record() RETURNS trigger LANGUAGE plpgsql AS $$
				BEGIN
					IF NEW.state = 'COMPLETED' AND EXISTS (SELECT 1 FROM refuse_commit) THEN
						RAISE EXCEPTION 'the test refuses this commit';
					END IF;
					RETURN NULL;
				END $$""", "CREATE CONSTRAINT TRIGGER record_refuse_commit AFTER INSERT OR UPDATE ON idempotency_record"
				+ " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION refuse_completed_record()");
		CatalogHttp http = new CatalogHttp(catalogUri());
		String key = RESTUtil.idempotencyHeaders().get(RESTUtil.IDEMPOTENCY_KEY_HEADER);
		String body = "{\"namespace\":[\"refused_once\"],\"properties\":{\"owner\":\"alice\"}}";
		long recordsBefore = database.records();
		try {
			execute("INSERT INTO refuse_commit (why) VALUES ('test')");
			CatalogHttp.Response refused = http.post("/v1/namespaces", body, "Idempotency-Key", key);
			execute("DELETE FROM refuse_commit");

			assertThat(refused.status()).isEqualTo(503);
			assertThat(refused.body()).contains("nothing was done");
			assertThat(refused.header("Retry-After")).isNotNull();
			assertThat(http.get("/v1/namespaces/refused_once").status()).as("the namespace after the failed commit")
				.isEqualTo(404);
			assertThat(database.records()).as("records after the failed commit").isEqualTo(recordsBefore);

			CatalogHttp.Response retry = http.post("/v1/namespaces", body, "Idempotency-Key", key);
			assertThat(retry.status()).isEqualTo(200);
			assertThat(retry.header("Idempotent-Replayed")).as("the retry ran").isNull();
			CatalogHttp.Response again = http.post("/v1/namespaces", body, "Idempotency-Key", key);
			assertThat(again.status()).isEqualTo(200);
			assertThat(again.header("Idempotent-Replayed")).isEqualTo("true");
			assertThat(again.body()).isEqualTo(retry.body());
			assertThat(http.get("/v1/namespaces/refused_once").json().path("properties").path("owner").asText())
				.isEqualTo("alice");
			assertThat(database.records()).as("one record for the key").isEqualTo(recordsBefore + 1);
		}
		finally {
			execute("DROP TRIGGER record_refuse_commit ON idempotency_record",
					"DROP FUNCTION refuse_completed_record()", "DROP TABLE refuse_commit");
		}
	}

	private void execute(String... statements) throws SQLException {
		try (Connection connection = this.dataSource.getConnection();
				Statement statement = connection.createStatement()) {
			for (String sql : statements) {
				statement.execute(sql);
			}
		}
	}

}
