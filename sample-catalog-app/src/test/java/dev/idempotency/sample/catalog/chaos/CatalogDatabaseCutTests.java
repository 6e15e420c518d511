package dev.idempotency.sample.catalog.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.idempotency.test.http.RawHttp;
import dev.idempotency.test.servers.FaultyTcpProxy;
import dev.idempotency.test.servers.JdbcTestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The catalog on PostgreSQL survives a cut of its database connections: once the database
 * is reachable again, requests succeed again (the catalog borrows a checked connection
 * from the pool per call instead of keeping one that the cut broke for good).
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class CatalogDatabaseCutTests {

	/**
	 * A database, not a schema: Iceberg's catalog looks for its tables in every schema.
	 */
	private static final JdbcTestDatabase DATABASE = JdbcTestDatabase.postgresDatabase();

	private static FaultyTcpProxy databaseLink;

	@LocalServerPort
	private int port;

	@DynamicPropertySource
	static void catalogOnPostgres(DynamicPropertyRegistry registry) throws SQLException, IOException {
		// Not while Spring Boot processes the test contexts ahead of time
		// (process-test-aot):
		// nothing connects then, and the database would be left behind.
		if (!Boolean.getBoolean("spring.aot.processing")) {
			DATABASE.create();
		}
		databaseLink = new FaultyTcpProxy(DATABASE.port(), 0, 0, 1);
		registry.add("spring.datasource.url", () -> DATABASE.url(databaseLink.port()));
		registry.add("spring.datasource.username", DATABASE::user);
		registry.add("spring.datasource.password", () -> "");
		registry.add("catalog.warehouse", () -> {
			try {
				return Files.createTempDirectory("catalog-cut-").toString();
			}
			catch (IOException ex) {
				throw new IllegalStateException(ex);
			}
		});
	}

	@AfterAll
	static void dropDatabase() throws Exception {
		databaseLink.close();
		DATABASE.drop();
	}

	@Test
	void afterADatabaseCutTheCatalogAnswersAgain() throws Exception {
		assertThat(createNamespace("before_cut")).isEqualTo(200);

		// The cut falls on connections in use: requests keep coming from several threads
		// meanwhile.
		AtomicBoolean busy = new AtomicBoolean(true);
		List<Thread> threads = new ArrayList<>();
		for (int i = 0; i < 4; i++) {
			String prefix = "during_cut_" + i + "_";
			Thread thread = new Thread(() -> {
				for (int n = 0; busy.get(); n++) {
					try {
						createNamespace(prefix + n);
					}
					catch (IOException ex) {
						// the answer may be lost in the cut
					}
				}
			});
			thread.start();
			threads.add(thread);
		}
		Thread.sleep(500);
		databaseLink.cut(300);
		Thread.sleep(800);
		busy.set(false);
		for (Thread thread : threads) {
			thread.join();
		}

		int status = 0;
		for (int attempt = 0; attempt < 10 && status != 200; attempt++) {
			status = createNamespace("after_cut_" + attempt);
			Thread.sleep(200);
		}
		assertThat(status).as("a namespace created after the database came back").isEqualTo(200);
		assertThat(RawHttp.exchange(this.port, "GET", "/v1/namespaces", null, null).body()).contains("before_cut");
	}

	private int createNamespace(String name) throws IOException {
		return RawHttp.exchange(this.port, "POST", "/v1/namespaces", null, "{\"namespace\": [\"" + name + "\"]}")
			.status();
	}

}
