package dev.idempotency.web.atomic;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.autoconfigure.MicrometerIdempotencyListener;
import dev.idempotency.autoconfigure.jdbc.JdbcStoreTestSupport;
import dev.idempotency.test.TestKeys;
import dev.idempotency.test.servers.JdbcTestDatabase;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Atomic completion of the HTTP door over real HTTP, on two nodes (two application
 * contexts of {@link AtomicTestApplication} in this JVM, each with its Tomcat and pool)
 * sharing one database of the subclass's server: the protected handler's business row and
 * the idempotency record commit together or not at all, in both modes. Nothing is
 * configured for it but {@code idempotency.store.type=jdbc} on the application's
 * {@code DataSource}: it is the default there.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@ExtendWith(OutputCaptureExtension.class)
abstract class AbstractAtomicCompletionOverHttpTests {

	/**
	 * Held while a node starts or closes: two Spring Boot applications setting up the
	 * JVM's one logging system at once break each other's set-up.
	 */
	private static final Object LIFECYCLE = new Object();

	private static final int CLIENTS = 64;

	protected final HttpClient http = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(5))
		.build();

	private JdbcTestDatabase database;

	private HikariDataSource dataSource;

	protected JdbcClient jdbc;

	private final Map<Mode, List<ConfigurableApplicationContext>> nodes = new EnumMap<>(Mode.class);

	protected abstract JdbcTestDatabase database();

	@BeforeAll
	void createDatabase() throws Exception {
		this.database = database().create();
		this.dataSource = this.database.dataSource(2);
		JdbcStoreTestSupport.createSchema(this.dataSource, "idempotency_record");
		this.jdbc = JdbcClient.create(this.dataSource);
		this.jdbc
			.sql("CREATE TABLE thing (run VARCHAR(36) PRIMARY KEY, idem_key VARCHAR(64) NOT NULL,"
					+ " body VARCHAR(200) NOT NULL, node VARCHAR(40) NOT NULL)")
			.update();
	}

	@AfterAll
	void dropDatabase() throws Exception {
		try {
			synchronized (LIFECYCLE) {
				this.nodes.values().stream().flatMap(List::stream).forEach(ConfigurableApplicationContext::close);
			}
		}
		finally {
			try {
				this.dataSource.close();
			}
			finally {
				this.database.drop();
			}
		}
	}

	@ParameterizedTest
	@EnumSource
	void sixtyFourClientsOnOneKeyOverTwoNodesMakeOneRowAndGetOneAnswer(Mode mode) throws Exception {
		List<URI> nodes = nodes(mode);
		String key = TestKeys.newKey();
		ExecutorService clients = Executors.newFixedThreadPool(CLIENTS);
		List<HttpResponse<String>> answers = new ArrayList<>();
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<HttpResponse<String>>> sent = new ArrayList<>();
			for (int i = 0; i < CLIENTS; i++) {
				URI node = nodes.get(i % 2);
				sent.add(clients.submit(() -> {
					start.await();
					return send(post(node, key, "one thing").header("X-Sleep", "100"));
				}));
			}
			start.countDown();
			for (Future<HttpResponse<String>> answer : sent) {
				answers.add(answer.get(60, TimeUnit.SECONDS));
			}
		}
		finally {
			clients.shutdownNow();
		}
		System.out.println("[atomic] " + getClass().getSimpleName() + " " + mode + ": " + CLIENTS
				+ " clients on one key over two nodes, the handler ran " + AtomicTestApplication.runs(key) + " times");
		assertThat(answers).allSatisfy((answer) -> assertThat(answer.statusCode()).as(answer.body()).isEqualTo(201));
		assertThat(answers).extracting(HttpResponse::body).as("one answer for all").containsOnly(answers.get(0).body());
		assertThat(answers).extracting((answer) -> answer.headers().firstValue("Location").orElse(null))
			.containsOnly(answers.get(0).headers().firstValue("Location").get());
		assertThat(answers).filteredOn((answer) -> answer.headers().firstValue("Idempotent-Replayed").isEmpty())
			.as("one original")
			.hasSize(1);
		assertThat(answers).filteredOn((answer) -> answer.headers().firstValue("Idempotent-Replayed").isPresent())
			.as("the others replayed")
			.hasSize(CLIENTS - 1)
			.allSatisfy((answer) -> assertThat(answer.headers().firstValue("Idempotent-Replayed")).hasValue("true"));
		assertThat(rows(key)).as("one business row, the one answered")
			.singleElement()
			.satisfies((run) -> assertThat(answers.get(0).body()).contains(run));
		assertThat(recordStates(key)).containsExactly("COMPLETED");
		if (mode == Mode.LEASE) {
			assertThat(AtomicTestApplication.runs(key)).as("the duplicates waited, none ran").isEqualTo(1);
		}
	}

	@ParameterizedTest
	@EnumSource
	void aKeyReusedWithAnotherBodyWhileTheFirstRunsMakesOneRowAndOne422(Mode mode) throws Exception {
		List<URI> nodes = nodes(mode);
		String key = TestKeys.newKey();
		String hold = "reuse-" + key;
		CompletableFuture<HttpResponse<String>> first = sendHeld(nodes.get(0), key, "first body", hold);
		CompletableFuture<HttpResponse<String>> second = this.http
			.sendAsync(post(nodes.get(1), key, "second body").build(), HttpResponse.BodyHandlers.ofString());
		if (mode == Mode.LEASE) {
			// The key is reserved: refused before it runs.
			assertThat(second.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(422);
		}
		else {
			// Nothing recorded yet: it runs, and records first.
			assertThat(second.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(201);
		}
		AtomicTestApplication.gate(hold).countDown();
		HttpResponse<String> one = first.get(30, TimeUnit.SECONDS);
		HttpResponse<String> two = second.get();
		assertThat(List.of(one.statusCode(), two.statusCode())).containsExactlyInAnyOrder(201, 422);
		HttpResponse<String> created = (one.statusCode() == 201) ? one : two;
		HttpResponse<String> refused = (one.statusCode() == 201) ? two : one;
		assertThat(refused.body()).contains("key-reused");
		// In record-after-success mode refused after it ran, outside Spring MVC: the same
		// problem body.
		assertThat(refused.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		assertThat(rows(key)).as("one business row: the refused one's was rolled back")
			.singleElement()
			.satisfies((run) -> assertThat(created.body()).contains(run));
		String createdBody = (created == one) ? "first body" : "second body";
		String refusedBody = (created == one) ? "second body" : "first body";
		HttpResponse<String> retry = send(post(nodes.get(0), key, createdBody));
		assertThat(retry.statusCode()).isEqualTo(201);
		assertThat(retry.body()).isEqualTo(created.body());
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(send(post(nodes.get(1), key, refusedBody)).statusCode()).isEqualTo(422);
		assertThat(rows(key)).hasSize(1);
	}

	@ParameterizedTest
	@EnumSource
	void anExceptionInTheHandlerLeavesNoRowAndNoRecordAndTheRetryRuns(Mode mode) throws Exception {
		failedRunLeavesNothing(mode, "exception");
	}

	@ParameterizedTest
	@EnumSource
	void a5xxFromTheHandlerLeavesNoRowAndNoRecordAndTheRetryRuns(Mode mode) throws Exception {
		failedRunLeavesNothing(mode, "status");
	}

	private void failedRunLeavesNothing(Mode mode, String failure) throws Exception {
		List<URI> nodes = nodes(mode);
		String key = TestKeys.newKey();
		HttpResponse<String> failed = send(post(nodes.get(0), key, "a thing").header("X-Fail", failure));
		assertThat(failed.statusCode()).isEqualTo(500);
		assertThat(AtomicTestApplication.runs(key)).as("it ran and inserted").isEqualTo(1);
		assertThat(rows(key)).as("its insert was rolled back").isEmpty();
		assertThat(recordStates(key)).as("the key is free").isEmpty();
		HttpResponse<String> retry = send(post(nodes.get(1), key, "a thing"));
		assertThat(retry.statusCode()).isEqualTo(201);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(AtomicTestApplication.runs(key)).as("the retry ran").isEqualTo(2);
		assertThat(rows(key)).singleElement().satisfies((run) -> assertThat(retry.body()).contains(run));
		assertThat(recordStates(key)).containsExactly("COMPLETED");
		HttpResponse<String> replay = send(post(nodes.get(0), key, "a thing"));
		assertThat(replay.body()).isEqualTo(retry.body());
		assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
	}

	/**
	 * The record is gone while the handler runs (an operator removed it): the completion
	 * changes no row, and the handler's write must not commit without it. On PostgreSQL
	 * the completion is sent with the transaction's {@code COMMIT}: a completion that
	 * changes nothing aborts the transaction before that {@code COMMIT} runs.
	 */
	@Test
	void aReservationGoneWhileTheHandlerRanRollsItsWriteBack() throws Exception {
		List<URI> nodes = nodes(Mode.LEASE);
		String key = TestKeys.newKey();
		String hold = "gone-" + key;
		CompletableFuture<HttpResponse<String>> first = sendHeld(nodes.get(0), key, "a thing", hold);
		assertThat(this.jdbc.sql("DELETE FROM idempotency_record WHERE idem_key = ?").param(key).update())
			.as("the reservation removed")
			.isEqualTo(1);
		AtomicTestApplication.gate(hold).countDown();
		HttpResponse<String> refused = first.get(30, TimeUnit.SECONDS);
		assertThat(refused.statusCode()).as(refused.body()).isEqualTo(409);
		assertThat(rows(key)).as("its insert was rolled back").isEmpty();
		assertThat(recordStates(key)).isEmpty();
		HttpResponse<String> retry = send(post(nodes.get(1), key, "a thing"));
		assertThat(retry.statusCode()).isEqualTo(201);
		assertThat(rows(key)).singleElement().satisfies((run) -> assertThat(retry.body()).contains(run));
		assertThat(recordStates(key)).containsExactly("COMPLETED");
	}

	/**
	 * The handler returned, and its own write is sent only at the door's commit (as a JPA
	 * session sends an entity it did not flush), where it fails on the primary key. The
	 * application answers that as it would have in the handler; the store did not fail.
	 */
	@ParameterizedTest
	@EnumSource
	void theApplicationsWriteFailingAtTheCommitIsAnsweredByTheApplicationAndTheKeyIsFree(Mode mode) throws Exception {
		List<URI> nodes = nodes(mode);
		String key = TestKeys.newKey();
		double released = executions(mode, "released");
		double storeErrors = executions(mode, "store_error");
		HttpResponse<String> failed = send(post(nodes.get(0), key, "a thing").header("X-Fail", "at-commit"));
		assertThat(failed.statusCode()).as(failed.body()).isEqualTo(409);
		assertThat(failed.body()).contains("duplicate thing").doesNotContain("store-unavailable");
		assertThat(failed.headers().firstValue("Retry-After")).isEmpty();
		assertThat(rows(key)).as("its insert was rolled back").isEmpty();
		assertThat(recordStates(key)).as("the key is free").isEmpty();
		assertThat(executions(mode, "released")).as("counted as the handler's failure").isEqualTo(released + 1);
		assertThat(executions(mode, "store_error")).as("not as the store's").isEqualTo(storeErrors);

		HttpResponse<String> again = send(post(nodes.get(1), key, "a thing").header("X-Fail", "at-commit"));
		assertThat(again.statusCode()).as("ran again, answered as the first").isEqualTo(409);
		HttpResponse<String> retry = send(post(nodes.get(1), key, "a thing"));
		assertThat(retry.statusCode()).isEqualTo(201);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(AtomicTestApplication.runs(key)).isEqualTo(3);
		assertThat(rows(key)).singleElement().satisfies((run) -> assertThat(retry.body()).contains(run));
		assertThat(recordStates(key)).containsExactly("COMPLETED");
	}

	@Test
	void anAsynchronousHandlerRunsWithoutTheTransactionAndAWarningNamesItOnce(CapturedOutput output) throws Exception {
		List<URI> nodes = nodes(Mode.LEASE);
		for (int i = 0; i < 2; i++) {
			String key = TestKeys.newKey();
			HttpResponse<String> answer = send(
					post(nodes.get(0), key, "later").uri(nodes.get(0).resolve("/things/async")));
			assertThat(answer.statusCode()).isEqualTo(200);
			assertThat(rows(key)).as("committed by its own boundary").hasSize(1);
		}
		assertThat(output.getOut().split("answers asynchronously: it runs without atomic completion", -1))
			.as("one WARN")
			.hasSize(2);
		assertThat(output.getOut()).contains("WARN").contains("createLater");
	}

	/**
	 * Sends a request held inside its handler at the gate {@code hold}, once it is there
	 * (its row inserted).
	 */
	private CompletableFuture<HttpResponse<String>> sendHeld(URI node, String key, String body, String hold)
			throws InterruptedException {
		CompletableFuture<HttpResponse<String>> sent = this.http
			.sendAsync(post(node, key, body).header("X-Hold", hold).build(), HttpResponse.BodyHandlers.ofString());
		assertThat(AtomicTestApplication.gate(hold + "-entered").await(20, TimeUnit.SECONDS))
			.as("inside its handler, its row inserted")
			.isTrue();
		return sent;
	}

	protected List<URI> nodes(Mode mode) {
		return this.nodes.computeIfAbsent(mode, (m) -> List.of(start(m, "a"), start(m, "b")))
			.stream()
			.map((context) -> URI
				.create("http://127.0.0.1:" + context.getEnvironment().getProperty("local.server.port")))
			.toList();
	}

	private ConfigurableApplicationContext start(Mode mode, String name) {
		String node = this.database.name() + "-" + mode.shortName + "-" + name;
		List<String> args = new ArrayList<>();
		args.add("--spring.datasource.url=" + this.database.url());
		args.add("--spring.datasource.username=" + this.database.user());
		args.add("--spring.datasource.password=");
		args.add("--spring.datasource.hikari.pool-name=" + node);
		args.add("--spring.datasource.hikari.maximum-pool-size=10");
		args.add("--atomic.node-name=" + node);
		args.add("--idempotency.mode=" + mode.property);
		args.add("--idempotency.store.type=jdbc");
		args.add("--idempotency.store.jdbc.initialize-schema=never");
		args.add("--idempotency.store.jdbc.purge.enabled=false");
		// The 64 clients' duplicates wait for the first (lease mode), then replay.
		args.add("--idempotency.in-flight.wait=30s");
		args.add("--server.port=0");
		args.add("--spring.main.banner-mode=off");
		args.add("--spring.jmx.enabled=false");
		synchronized (LIFECYCLE) {
			return new SpringApplicationBuilder(AtomicTestApplication.class).registerShutdownHook(false)
				.run(args.toArray(String[]::new));
		}
	}

	protected HttpRequest.Builder post(URI node, String key, String body) {
		return HttpRequest.newBuilder(node.resolve("/things"))
			.header("Idempotency-Key", key)
			.header("Content-Type", "text/plain")
			.timeout(Duration.ofSeconds(60))
			.POST(HttpRequest.BodyPublishers.ofString(body));
	}

	protected HttpResponse<String> send(HttpRequest.Builder request) throws IOException, InterruptedException {
		return this.http.send(request.build(), HttpResponse.BodyHandlers.ofString());
	}

	/**
	 * The {@code idempotency.executions} count of {@code result} on the first node of
	 * {@code mode}.
	 */
	protected double executions(Mode mode, String result) {
		Counter counter = this.nodes.get(mode)
			.get(0)
			.getBean(MeterRegistry.class)
			.find(MicrometerIdempotencyListener.EXECUTIONS_METER_NAME)
			.tag("result", result)
			.tag("operation", "ThingController.create")
			.counter();
		return (counter != null) ? counter.count() : 0;
	}

	/** The run ids of the business rows of a key. */
	protected List<String> rows(String key) {
		return this.jdbc.sql("SELECT run FROM thing WHERE idem_key = ?").param(key).query(String.class).list();
	}

	protected List<String> recordStates(String key) {
		return this.jdbc.sql("SELECT state FROM idempotency_record WHERE idem_key = ?")
			.param(key)
			.query(String.class)
			.list();
	}

	/** {@code idempotency.mode}. */
	enum Mode {

		LEASE("lease", "lease"), RECORD_AFTER_SUCCESS("record-after-success", "ras");

		final String property;

		final String shortName;

		Mode(String property, String shortName) {
			this.property = property;
			this.shortName = shortName;
		}

	}

}
