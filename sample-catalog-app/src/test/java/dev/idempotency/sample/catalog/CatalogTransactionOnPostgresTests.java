package dev.idempotency.sample.catalog;

import static org.assertj.core.api.Assertions.assertThat;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import dev.idempotency.sample.catalog.support.CatalogHttp;
import dev.idempotency.sample.catalog.support.JdbcStores;
import org.apache.iceberg.jdbc.JdbcCatalog;
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
 * nor a record, and the retry with the same key creates it once; and a create that loses
 * a race for its catalog row (a failed statement inside the PostgreSQL transaction) is
 * answered 409, not 5xx.
 */
class CatalogTransactionOnPostgresTests extends CatalogTransactionTests {

	/** The database of the class running now (test classes run one after another). */
	private static JdbcStores.Store database;

	@Autowired
	private DataSource dataSource;

	@Autowired
	private JdbcCatalog catalog;

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

	/**
	 * The database refuses the commit of the record (a deferred trigger on the store's
	 * table raises {@code disk_full}, a failure of the database, not of the catalog's own
	 * writes): nothing was done, answered {@code 503} to retry.
	 */
	@Test
	void aCreateNamespaceWhoseRecordCannotCommitLeavesNoNamespaceAndItsRetryCreatesItOnce() throws SQLException {
		execute("CREATE TABLE refuse_commit (why VARCHAR(40))", """
				CREATE FUNCTION refuse_completed_record() RETURNS trigger LANGUAGE plpgsql AS $$
				BEGIN
					IF NEW.state = 'COMPLETED' AND EXISTS (SELECT 1 FROM refuse_commit) THEN
						RAISE EXCEPTION 'the test refuses this commit' USING ERRCODE = 'disk_full';
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

	/**
	 * Two creates of one table race: the request passes Iceberg's existence check, then
	 * its {@code INSERT} of the catalog row waits on the test's uncommitted row with the
	 * same key, and fails on the unique key once the test commits. Iceberg answers that
	 * with {@code AlreadyExistsException}. On PostgreSQL the failed statement aborts the
	 * door's transaction; the answer is still a 409, recorded in lease mode, because the
	 * door rolls back the transaction of a handler that threw before it records the
	 * answer on its own.
	 */
	@Test
	void aCreateTableThatLosesARaceForItsCatalogRowIsAnswered409() throws Exception {
		CatalogHttp http = new CatalogHttp(catalogUri());
		assertThat(http.post("/v1/namespaces", "{\"namespace\":[\"race\"]}").status()).isEqualTo(200);
		String key = RESTUtil.idempotencyHeaders().get(RESTUtil.IDEMPOTENCY_KEY_HEADER);
		String body = "{\"name\":\"t\",\"schema\":{\"type\":\"struct\",\"schema-id\":0,"
				+ "\"fields\":[{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"}]}}";
		// The racing row points at the metadata of a real table, so that the table it
		// makes exists as far as Iceberg can tell.
		assertThat(http.post("/v1/namespaces/race/tables", body.replace("\"t\"", "\"model\"")).status()).isEqualTo(200);
		CompletableFuture<CatalogHttp.Response> create;
		try (Connection other = this.dataSource.getConnection()) {
			other.setAutoCommit(false);
			try (PreparedStatement insert = other.prepareStatement("INSERT INTO iceberg_tables (catalog_name,"
					+ " table_namespace, table_name, metadata_location, previous_metadata_location, iceberg_type)"
					+ " SELECT catalog_name, table_namespace, 't', metadata_location, NULL, iceberg_type"
					+ " FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = 'race' AND table_name = 'model'")) {
				insert.setString(1, this.catalog.name());
				assertThat(insert.executeUpdate()).isOne();
			}
			create = CompletableFuture
				.supplyAsync(() -> http.post("/v1/namespaces/race/tables", body, "Idempotency-Key", key));
			awaitASessionBlockedBy(other, create);
			other.commit();
		}
		CatalogHttp.Response lost = create.get(1, TimeUnit.MINUTES);
		assertThat(lost.status()).as(lost.body()).isEqualTo(409);
		assertThat(lost.errorType()).isEqualTo("AlreadyExistsException");

		CatalogHttp.Response retry = http.post("/v1/namespaces/race/tables", body, "Idempotency-Key", key);
		assertThat(retry.status()).isEqualTo(409);
		assertThat(retry.errorType()).isEqualTo("AlreadyExistsException");
		assertThat(retry.header("Idempotent-Replayed")).as("lease mode records the 409, record-after-success does not")
			.isEqualTo(recordAfterSuccess() ? null : "true");
	}

	private static void awaitASessionBlockedBy(Connection holder, CompletableFuture<?> request) throws Exception {
		long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
		while (true) {
			try (Statement statement = holder.createStatement();
					ResultSet count = statement.executeQuery("SELECT count(*) FROM pg_stat_activity"
							+ " WHERE pg_backend_pid() = ANY(pg_blocking_pids(pid))")) {
				count.next();
				if (count.getLong(1) > 0) {
					return;
				}
			}
			if (request.isDone()) {
				throw new IllegalStateException("the request finished without waiting: " + request.get());
			}
			if (System.nanoTime() > deadline) {
				throw new IllegalStateException("the request never waited on the test's catalog row");
			}
			Thread.sleep(10);
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
