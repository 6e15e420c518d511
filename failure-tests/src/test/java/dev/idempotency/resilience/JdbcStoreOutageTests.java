package dev.idempotency.resilience;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.autoconfigure.jdbc.JdbcStoreTestSupport;
import dev.idempotency.test.TestKeys;
import dev.idempotency.test.servers.JdbcTestDatabase;
import dev.idempotency.test.servers.TcpProxy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.health.contributor.Status;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A JDBC store whose database stops answering, or is not there when the node starts, over
 * real HTTP with the store's default timeouts. Every keyed request must get its answer (a
 * 503 with Retry-After when the store cannot decide) within a few seconds, whatever the
 * network does, and no handler may run unprotected. Each database runs this suite through
 * a subclass.
 * <p>
 * A black hole (a proxy that accepts and reads but never answers) is the case the store's
 * query timeout cannot end: the server never reads the statement, so it never cancels it.
 */
abstract class JdbcStoreOutageTests {

	/** The bound on a failure answer: a correctness property, not a speed claim. */
	private static final Duration FAILURE_ANSWER_BOUND = Duration.ofSeconds(3);

	private JdbcTestDatabase database;

	/** A schema or database of its own on the shared server. */
	protected abstract JdbcTestDatabase createDatabase() throws SQLException;

	@BeforeEach
	void createDatabaseForTheTest() throws SQLException {
		this.database = createDatabase();
	}

	@AfterEach
	void dropDatabase() throws SQLException {
		this.database.drop();
	}

	@Test
	void aBlackholedStoreOnItsOwnPoolAnswersEveryKeyedRequest503WithinSecondsAndRunsNothing() throws Exception {
		try (TcpProxy proxy = TcpProxy.to(this.database.port());
				Node node = Node.start("own-pool", Settings.with(ownPool(proxy.port())))) {
			assertBlackholedRequestsAnswered503InTime(node, proxy);
		}
	}

	@Test
	void aBlackholedStoreOnTheApplicationsDataSourceAnswersEveryKeyedRequest503WithinSeconds() throws Exception {
		try (TcpProxy proxy = TcpProxy.to(this.database.port());
				Node node = Node.start("shared-pool", Settings.with(applicationPool(proxy.port())))) {
			assertBlackholedRequestsAnswered503InTime(node, proxy);
		}
	}

	@Test
	void aNodeStartedWhileTheDatabaseRefusesStartsAnswers503ThenCreatesTheTableAndProtects() throws Exception {
		try (TcpProxy proxy = TcpProxy.to(this.database.port())) {
			proxy.cut();
			try (Node node = Node.start("started-in-outage", Settings.with(ownPool(proxy.port())))) {
				assertResumesOnceTheDatabaseAnswers(node, proxy);
			}
		}
	}

	@Test
	void withInitializeSchemaNeverANodeStartedWhileTheDatabaseRefusesStartsAndResumes() throws Exception {
		try (HikariDataSource direct = this.database.dataSource(1)) {
			JdbcStoreTestSupport.createSchema(direct, "idempotency_record");
		}
		try (TcpProxy proxy = TcpProxy.to(this.database.port())) {
			proxy.cut();
			Map<String, String> properties = ownPool(proxy.port());
			properties.put("idempotency.store.jdbc.initialize-schema", "never");
			try (Node node = Node.start("never-in-outage", Settings.with(properties))) {
				assertResumesOnceTheDatabaseAnswers(node, proxy);
			}
		}
	}

	@Test
	void aNodeOnTheApplicationsDataSourceStartedWhileTheDatabaseRefusesStartsAndResumes() throws Exception {
		try (TcpProxy proxy = TcpProxy.to(this.database.port())) {
			proxy.cut();
			try (Node node = Node.start("shared-started-in-outage", Settings.with(applicationPool(proxy.port())))) {
				assertResumesOnceTheDatabaseAnswers(node, proxy);
			}
		}
	}

	private void assertBlackholedRequestsAnswered503InTime(Node node, TcpProxy proxy) {
		String control = TestKeys.newKey();
		HttpResponse<byte[]> run = send(order(node, control));
		assertThat(run.statusCode()).as(Http.describe(run)).isEqualTo(201);
		assertThat(Http.replayed(send(order(node, control)))).isTrue();

		// Right after a served request: the pool's connections are fresh, so none is
		// validated before it is used.
		proxy.blackhole();
		List<Long> millis = new ArrayList<>();
		for (int i = 0; i < 6; i++) {
			String key = TestKeys.newKey();
			long sentAt = System.nanoTime();
			HttpResponse<byte[]> answer = send(order(node, key));
			Duration took = Duration.ofNanos(System.nanoTime() - sentAt);
			millis.add(took.toMillis());
			assertStoreUnavailable(answer);
			assertThat(took).as("answer %d after the cut (all so far: %s ms)", i + 1, millis)
				.isLessThan(FAILURE_ANSWER_BOUND);
			assertThat(node.runs("orders", key)).as("nothing runs unprotected").isZero();
		}
		System.out.printf("[resilience] %s (%s): 503 answers after the black hole in %s ms%n",
				getClass().getSimpleName(), node.name(), millis);
	}

	private void assertResumesOnceTheDatabaseAnswers(Node node, TcpProxy proxy) throws InterruptedException {
		assertThat(node.storeHealth().getStatus()).isEqualTo(Status.DOWN);
		String key = TestKeys.newKey();
		HttpResponse<byte[]> refused = send(order(node, key));
		assertStoreUnavailable(refused);
		assertThat(node.runs("orders", key)).isZero();

		proxy.restore();
		long restoredAt = System.nanoTime();
		HttpResponse<byte[]> answer = refused;
		long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
		while (answer.statusCode() == 503 && System.nanoTime() < deadline) {
			assertStoreUnavailable(answer);
			assertThat(node.runs("orders", key)).isZero();
			Thread.sleep(200);
			answer = send(order(node, key));
		}
		assertThat(answer.statusCode()).as(Http.describe(answer)).isEqualTo(201);
		System.out.printf("[resilience] %s: first 2xx %d ms after the database answered%n", getClass().getSimpleName(),
				Duration.ofNanos(System.nanoTime() - restoredAt).toMillis());
		HttpResponse<byte[]> replay = send(order(node, key));
		assertThat(Http.replayed(replay)).as(Http.describe(replay)).isTrue();
		assertThat(replay.body()).isEqualTo(answer.body());
		assertThat(node.runs("orders", key)).isEqualTo(1);
		assertThat(node.storeHealth().getStatus()).isEqualTo(Status.UP);
	}

	/** The store on a pool of its own ({@code idempotency.store.jdbc.url}), defaults. */
	private Map<String, String> ownPool(int port) {
		Map<String, String> properties = common();
		properties.put("idempotency.store.jdbc.url", this.database.url(port));
		properties.put("idempotency.store.jdbc.username", this.database.user());
		properties.put("idempotency.store.jdbc.password", "");
		return properties;
	}

	/**
	 * The store on the application's pool, whose connection timeout is short (as the docs
	 * ask) and whose driver has no socket timeout.
	 */
	private Map<String, String> applicationPool(int port) {
		Map<String, String> properties = common();
		properties.put("spring.datasource.url", this.database.url(port));
		properties.put("spring.datasource.username", this.database.user());
		properties.put("spring.datasource.password", "");
		properties.put("spring.datasource.hikari.connection-timeout", "1000");
		properties.put("spring.datasource.hikari.validation-timeout", "500");
		properties.put("spring.datasource.hikari.maximum-pool-size", "4");
		return properties;
	}

	private static Map<String, String> common() {
		Map<String, String> properties = new LinkedHashMap<>();
		properties.put("idempotency.store.type", "jdbc");
		properties.put("spring.autoconfigure.exclude",
				"org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration");
		return properties;
	}

	private static HttpRequest order(Node node, String key) {
		return Http.post(node.uri("/orders"), key, "{\"name\":\"outage\"}");
	}

	private static HttpResponse<byte[]> send(HttpRequest request) {
		return Http.send(request);
	}

	private static void assertStoreUnavailable(HttpResponse<byte[]> response) {
		assertThat(response.statusCode()).as(Http.describe(response)).isEqualTo(503);
		assertThat(response.headers().firstValue("Retry-After"))
			.hasValueSatisfying((seconds) -> assertThat(Long.parseLong(seconds)).isPositive());
		assertThat(Http.problemType(response)).isEqualTo(Http.PROBLEMS + "store-unavailable");
	}

}
