package dev.idempotency.web;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import dev.idempotency.Idempotent;
import dev.idempotency.NonBlockingThreads;
import dev.idempotency.test.TestKeys;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.context.Context;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Atomic completion through the WebFlux door on the R2DBC store, with BlockHound
 * installed: a handler that inserts one row through R2DBC (Boot's {@code DatabaseClient},
 * on the store's {@code ConnectionFactory}) runs inside the door's reactive transaction,
 * and its answer is recorded in it. The row and the record commit together or not at all;
 * a failing handler rolls both back and frees its key. Annotated controllers (the web
 * filter) and a functional route (its filter function).
 */
@SpringBootTest(classes = AbstractR2dbcAtomicWebFluxTests.AtomicApplication.class,
		webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "spring.main.web-application-type=reactive", "idempotency.in-flight.max-wait=5s" })
@ExtendWith(NonBlockingThreads.class)
abstract class AbstractR2dbcAtomicWebFluxTests {

	@LocalServerPort
	int port;

	@Autowired
	DatabaseClient database;

	WebTestClient client;

	@BeforeEach
	void createTable() {
		this.client = WebTestClient.bindToServer()
			.baseUrl("http://127.0.0.1:" + this.port)
			.responseTimeout(Duration.ofSeconds(30))
			.build();
		this.database.sql("CREATE TABLE IF NOT EXISTS atomic_orders (order_key VARCHAR(100) NOT NULL)")
			.then()
			.block(Duration.ofSeconds(10));
		Orders.failNext.set(false);
	}

	@AfterEach
	void nothingBlocked() {
		NonBlockingThreads.assertNoneBlocked();
	}

	@Test
	void assertBlockingIsDetected() {
		NonBlockingThreads.assertBlockingIsDetected();
	}

	@Test
	void aHandlerThatInsertsOneRowInsertsItOncePerKey() {
		String key = TestKeys.newKey();
		EntityExchangeResult<String> first = post("/atomic/orders", key);
		EntityExchangeResult<String> retry = post("/atomic/orders", key);
		assertThat(first.getStatus()).isEqualTo(HttpStatus.CREATED);
		assertThat(retry.getStatus()).isEqualTo(HttpStatus.CREATED);
		assertThat(retry.getResponseHeaders().getFirst("Idempotent-Replayed")).isEqualTo("true");
		assertThat(retry.getResponseBody()).isEqualTo(first.getResponseBody());
		assertThat(rows(key)).isEqualTo(1);
		assertThat(completedRecords(key)).isEqualTo(1);
	}

	@Test
	void racingFirstRequestsInsertTheRowOnce() {
		String key = TestKeys.newKey();
		List<Mono<EntityExchangeResult<String>>> requests = new ArrayList<>();
		for (int i = 0; i < 16; i++) {
			requests.add(Mono.fromCallable(() -> post("/atomic/orders", key)).subscribeOn(Schedulers.boundedElastic()));
		}
		List<EntityExchangeResult<String>> results = Flux.merge(requests).collectList().block(Duration.ofSeconds(60));
		assertThat(results).hasSize(16);
		List<String> bodies = results.stream()
			.filter((result) -> result.getStatus() == HttpStatus.CREATED)
			.map(EntityExchangeResult::getResponseBody)
			.distinct()
			.toList();
		assertThat(bodies).as("one answer for every request that got one").hasSize(1);
		assertThat(rows(key)).isEqualTo(1);
		assertThat(completedRecords(key)).isEqualTo(1);
	}

	@Test
	void aFailingHandlerRollsItsRowBackAndFreesItsKey() {
		String key = TestKeys.newKey();
		Orders.failNext.set(true);
		assertThat(post("/atomic/orders", key).getStatus()).isEqualTo(HttpStatus.INTERNAL_SERVER_ERROR);
		assertThat(rows(key)).isZero();
		assertThat(completedRecords(key)).isZero();
		EntityExchangeResult<String> retry = post("/atomic/orders", key);
		assertThat(retry.getStatus()).isEqualTo(HttpStatus.CREATED);
		assertThat(retry.getResponseHeaders().getFirst("Idempotent-Replayed")).isNull();
		assertThat(rows(key)).isEqualTo(1);
		assertThat(completedRecords(key)).isEqualTo(1);
	}

	/**
	 * The record cannot be written (another owner took the key over while the handler
	 * ran): the handler's row is rolled back with it, and the answer says nothing was
	 * done.
	 */
	@Test
	void aRecordThatCannotBeWrittenRollsTheRowBack() {
		String key = TestKeys.newKey();
		EntityExchangeResult<String> result = post("/atomic/orders-taken-over", key);
		assertThat(result.getStatus().is2xxSuccessful()).isFalse();
		assertThat(result.getResponseHeaders().getContentType()).isEqualTo(MediaType.APPLICATION_PROBLEM_JSON);
		assertThat(rows(key)).isZero();
		assertThat(completedRecords(key)).isZero();
	}

	@Test
	void aHandlerThatWritesNothingIsRecordedAlone() {
		String key = TestKeys.newKey();
		EntityExchangeResult<String> first = post("/atomic/nothing", key);
		EntityExchangeResult<String> retry = post("/atomic/nothing", key);
		assertThat(first.getStatus()).isEqualTo(HttpStatus.CREATED);
		assertThat(retry.getResponseHeaders().getFirst("Idempotent-Replayed")).isEqualTo("true");
		assertThat(completedRecords(key)).isEqualTo(1);
		assertThat(Orders.nothingRuns.get()).isGreaterThanOrEqualTo(1);
	}

	@Test
	void aFunctionalRouteInsertsItsRowOncePerKey() {
		String key = TestKeys.newKey();
		EntityExchangeResult<String> first = post("/atomic/route", key);
		EntityExchangeResult<String> retry = post("/atomic/route", key);
		assertThat(first.getStatus()).isEqualTo(HttpStatus.CREATED);
		assertThat(retry.getResponseHeaders().getFirst("Idempotent-Replayed")).isEqualTo("true");
		assertThat(rows(key)).isEqualTo(1);
		assertThat(completedRecords(key)).isEqualTo(1);
	}

	@Test
	void aFailingFunctionalRouteRollsItsRowBack() {
		String key = TestKeys.newKey();
		Orders.failNext.set(true);
		assertThat(post("/atomic/route", key).getStatus()).isEqualTo(HttpStatus.INTERNAL_SERVER_ERROR);
		assertThat(rows(key)).isZero();
		assertThat(post("/atomic/route", key).getStatus()).isEqualTo(HttpStatus.CREATED);
		assertThat(rows(key)).isEqualTo(1);
	}

	EntityExchangeResult<String> post(String path, String key) {
		return this.client.post()
			.uri(path)
			.header("Idempotency-Key", key)
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue("{\"item\":\"book\"}")
			.exchange()
			.expectBody(String.class)
			.returnResult();
	}

	private long rows(String key) {
		return count("SELECT COUNT(*) AS n FROM atomic_orders WHERE order_key = :key", key);
	}

	private long completedRecords(String key) {
		return count("SELECT COUNT(*) AS n FROM idempotency_record WHERE idem_key = :key AND state = 'COMPLETED'", key);
	}

	private long count(String sql, String key) {
		Number count = this.database.sql(sql)
			.bind("key", key)
			.map((row, metadata) -> row.get("n", Number.class))
			.one()
			.block(Duration.ofSeconds(10));
		return (count != null) ? count.longValue() : -1;
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration(
			excludeName = "org.springframework.boot.liquibase.autoconfigure.LiquibaseAutoConfiguration")
	@Import(Orders.class)
	static class AtomicApplication {

		@org.springframework.context.annotation.Bean
		RouterFunction<ServerResponse> atomicRoute(Orders orders, IdempotencyHandlerFilterFunction idempotency) {
			return RouterFunctions.route()
				.POST("/atomic/route",
						(request) -> orders.insert(request.headers().firstHeader("Idempotency-Key"))
							.flatMap((body) -> ServerResponse.status(HttpStatus.CREATED).bodyValue(body)))
				.filter(idempotency)
				.build();
		}

	}

	@RestController
	static class Orders {

		static final AtomicBoolean failNext = new AtomicBoolean();

		static final AtomicInteger nothingRuns = new AtomicInteger();

		private final DatabaseClient database;

		private final AtomicInteger runs = new AtomicInteger();

		Orders(DatabaseClient database) {
			this.database = database;
		}

		@PostMapping("/atomic/orders")
		@Idempotent
		Mono<org.springframework.http.ResponseEntity<Map<String, Object>>> create(
				@RequestHeader("Idempotency-Key") String key) {
			return insert(key)
				.map((body) -> org.springframework.http.ResponseEntity.status(HttpStatus.CREATED).body(body));
		}

		/** Inserts the row, in the transaction of the context (the door's). */
		Mono<Map<String, Object>> insert(String key) {
			int run = this.runs.incrementAndGet();
			return this.database.sql("INSERT INTO atomic_orders (order_key) VALUES (:key)")
				.bind("key", key)
				.then()
				.then(Mono.defer(() -> failNext.getAndSet(false)
						? Mono.error(new IllegalStateException("the handler failed after its insert"))
						: Mono.just(Map.<String, Object>of("order", key, "run", run))));
		}

		@PostMapping("/atomic/orders-taken-over")
		@Idempotent
		Mono<org.springframework.http.ResponseEntity<Map<String, Object>>> takenOver(
				@RequestHeader("Idempotency-Key") String key) {
			// Another owner takes the record over, outside the door's transaction.
			Mono<Long> takeOver = this.database
				.sql("UPDATE idempotency_record SET owner_token = 'another-owner' WHERE idem_key = :key")
				.bind("key", key)
				.fetch()
				.rowsUpdated()
				.contextWrite((context) -> Context.empty());
			return takeOver.then(create(key));
		}

		@PostMapping("/atomic/nothing")
		@Idempotent
		Mono<org.springframework.http.ResponseEntity<Map<String, Object>>> nothing() {
			return Mono.fromSupplier(() -> org.springframework.http.ResponseEntity.status(HttpStatus.CREATED)
				.body(Map.<String, Object>of("run", nothingRuns.incrementAndGet())));
		}

	}

}
