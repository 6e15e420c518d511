package dev.idempotency.method;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import dev.idempotency.autoconfigure.MicrometerIdempotencyListener;
import dev.idempotency.core.IdempotencyErrorType;
import dev.idempotency.test.TestKeys;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The method door behind real HTTP: handler methods with a key expression, and services
 * behind handlers.
 */
@SpringBootTest(classes = MethodDoorWebTestApplication.class,
		webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = "idempotency.in-flight.wait=100ms")
@ExtendWith(OutputCaptureExtension.class)
class MethodDoorHttpTests {

	private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	private static final JsonMapper JSON = new JsonMapper();

	private static final String PROBLEMS = "https://idempotency.dev/problems/";

	@LocalServerPort
	private int port;

	@Autowired
	private MethodDoorWebTestApplication.Runs runs;

	@Autowired
	private MeterRegistry meters;

	@Autowired
	private MethodDoorWebTestApplication.Gate gate;

	@Autowired
	private MethodDoorWebTestApplication.Bookings bookings;

	@Test
	void aKeyExpressionOnAHandlerMethodProtectsItWithoutTheHeader() {
		HttpResponse<String> first = post("/orders", null, "{\"requestId\":\"b-1\",\"item\":\"book\"}");
		HttpResponse<String> again = post("/orders", null, "{\"requestId\":\"b-1\",\"item\":\"book\"}");
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(again.statusCode()).isEqualTo(200);
		assertThat(again.body()).isEqualTo(first.body()).contains("\"run\":1");
		// The return value is replayed and rendered again, not the stored HTTP response.
		assertThat(again.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(this.runs.of("create-b-1-book")).isEqualTo(1);
	}

	@Test
	void withAHeaderAndAKeyExpressionTheExpressionIsTheKeyAndTheCallIsProtectedOnce() {
		double executedBefore = outcome("executed", "OrderController.create");
		HttpResponse<String> first = post("/orders", TestKeys.newKey(), "{\"requestId\":\"b-2\",\"item\":\"book\"}");
		// Another header, the same key expression: the same operation, replayed.
		HttpResponse<String> again = post("/orders", TestKeys.newKey(), "{\"requestId\":\"b-2\",\"item\":\"book\"}");
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(again.body()).isEqualTo(first.body());
		assertThat(this.runs.of("create-b-2-book")).isEqualTo(1);
		// One record, not one per door.
		assertThat(outcome("executed", "OrderController.create") - executedBefore).isEqualTo(1);
	}

	@Test
	void aKeyExpressionTakesLongOpaqueKeysAndAnOperationCanAskForUuids() {
		String longKey = "order:" + "x".repeat(240) + "%41";
		HttpResponse<String> first = post("/orders", null, "{\"requestId\":\"" + longKey + "\",\"item\":\"book\"}");
		HttpResponse<String> again = post("/orders", null, "{\"requestId\":\"" + longKey + "\",\"item\":\"book\"}");
		assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
		assertThat(again.body()).isEqualTo(first.body());
		assertThat(this.runs.of("create-" + longKey + "-book")).isEqualTo(1);
		HttpResponse<String> tooLong = post("/orders", null,
				"{\"requestId\":\"" + "y".repeat(256) + "\",\"item\":\"book\"}");
		assertThat(tooLong.statusCode()).isEqualTo(400);

		String v4 = java.util.UUID.randomUUID().toString();
		assertThat(post("/orders/uuid", null, "{\"requestId\":\"" + v4 + "\",\"item\":\"book\"}").statusCode())
			.isEqualTo(200);
		HttpResponse<String> opaque = post("/orders/uuid", null, "{\"requestId\":\"order-7\",\"item\":\"book\"}");
		assertThat(opaque.statusCode()).isEqualTo(400);
		assertThat(json(opaque).get("type").asString()).isEqualTo(PROBLEMS + "invalid-key");
		assertThat(this.runs.of("uuid-order-7-book")).isZero();
	}

	@Test
	void aKeyReusedWithOtherArgumentsIsA422ProblemWithoutAnErrorLog(CapturedOutput output) {
		assertThat(post("/orders", null, "{\"requestId\":\"c-1\",\"item\":\"book\"}").statusCode()).isEqualTo(200);
		HttpResponse<String> reused = post("/orders", null, "{\"requestId\":\"c-1\",\"item\":\"pen\"}");
		assertThat(reused.statusCode()).isEqualTo(422);
		assertThat(reused.headers().firstValue("Content-Type")).hasValue("application/problem+json");
		JsonNode problem = json(reused);
		assertThat(problem.get("type").asString()).isEqualTo(PROBLEMS + "key-reused");
		assertThat(problem.get("title").asString()).isEqualTo(IdempotencyErrorType.KEY_REUSED.title());
		assertThat(problem.get("status").asInt()).isEqualTo(422);
		assertThat(problem.get("detail").asString()).contains("different request");
		assertThat(problem.get("instance").asString()).isEqualTo("/orders");
		assertThat(this.runs.of("create-c-1-pen")).isZero();
		assertThat(output.getAll()).doesNotContain("IdempotencyRejectedException");
	}

	@Test
	void aServiceBehindAnUnprotectedHandlerAnswersItsRejectionAsAProblem(CapturedOutput output) {
		assertThat(post("/charges", null, "{\"orderId\":\"c-2\",\"cents\":100}").statusCode()).isEqualTo(200);
		HttpResponse<String> again = post("/charges", null, "{\"orderId\":\"c-2\",\"cents\":100}");
		assertThat(again.statusCode()).isEqualTo(200);
		assertThat(json(again).get("run").asInt()).isEqualTo(1);
		HttpResponse<String> reused = post("/charges", null, "{\"orderId\":\"c-2\",\"cents\":999}");
		assertThat(reused.statusCode()).isEqualTo(422);
		assertThat(json(reused).get("type").asString()).isEqualTo(PROBLEMS + "key-reused");
		assertThat(this.runs.of("pay-c-2")).isEqualTo(1);
		assertThat(output.getAll()).doesNotContain("IdempotencyRejectedException");
	}

	@Test
	void aDuplicateWhileTheFirstCallRunsIsA409Problem() throws Exception {
		String body = "{\"requestId\":\"c-3\",\"item\":\"book\"}";
		CompletableFuture<HttpResponse<String>> first = CompletableFuture
			.supplyAsync(() -> post("/orders/slow", null, body));
		try {
			assertThat(this.gate.entered.await(30, TimeUnit.SECONDS)).isTrue();
			HttpResponse<String> duplicate = post("/orders/slow", null, body);
			assertThat(duplicate.statusCode()).isEqualTo(409);
			assertThat(json(duplicate).get("type").asString()).isEqualTo(PROBLEMS + "request-in-flight");
		}
		finally {
			this.gate.open.countDown();
		}
		assertThat(first.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
		assertThat(this.runs.of("slow-c-3")).isEqualTo(1);
	}

	@Test
	void aServiceStillInFlightIsNotStoredAsTheAnswerOfTheHandlersOwnKey() throws Exception {
		String body = "{\"id\":\"room-7\"}";
		CompletableFuture<HttpResponse<String>> first = CompletableFuture
			.supplyAsync(() -> post("/bookings", TestKeys.newKey(), body));
		String key = TestKeys.newKey();
		try {
			assertThat(this.bookings.awaitEntered()).isTrue();
			HttpResponse<String> refused = post("/bookings", key, body);
			assertThat(refused.statusCode()).isEqualTo(409);
		}
		finally {
			this.bookings.open();
		}
		assertThat(first.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(200);

		// The 409 said "still in flight, retry later": the retry with the same key runs
		// again.
		HttpResponse<String> retry = post("/bookings", key, body);
		assertThat(retry.statusCode()).isEqualTo(200);
		assertThat(retry.body()).contains("booked room-7 #1");
		assertThat(this.runs.of("book-room-7")).isEqualTo(1);
	}

	@Test
	void aHandlerThatPassesItsOwnKeyToAKeyedServiceRunsOnceAndIsReplayed() {
		// The HTTP door's record and the method door's, under one key and one scope, are
		// two records: the service's call does not meet the handler's reservation.
		String key = TestKeys.newKey();
		HttpResponse<String> first = post("/charges/under-request-key", key, "{\"cents\":5}");
		assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
		assertThat(json(first).get("orderId").asString()).isEqualTo(key);
		HttpResponse<String> retry = post("/charges/under-request-key", key, "{\"cents\":5}");
		assertThat(retry.statusCode()).isEqualTo(200);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(this.runs.of("charge-handler-" + key)).isEqualTo(1);
		assertThat(this.runs.of("pay-" + key)).isEqualTo(1);
	}

	@Test
	void aRefusalOfAnInnerDoorIsAnsweredButNeverStoredAsTheHandlersAnswer() {
		assertThat(post("/charges/protected", TestKeys.newKey(), "{\"orderId\":\"n-1\",\"cents\":100}").statusCode())
			.isEqualTo(200);
		// Another request whose service call reuses the order with another amount: the
		// method door refuses it, and the handler's request answers that refusal.
		String key = TestKeys.newKey();
		HttpResponse<String> refused = post("/charges/protected", key, "{\"orderId\":\"n-1\",\"cents\":999}");
		assertThat(refused.statusCode()).isEqualTo(422);
		assertThat(json(refused).get("type").asString()).isEqualTo(PROBLEMS + "key-reused");
		// Not stored under the request's key: its retry runs the handler again.
		HttpResponse<String> retry = post("/charges/protected", key, "{\"orderId\":\"n-1\",\"cents\":999}");
		assertThat(retry.statusCode()).isEqualTo(422);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(this.runs.of("charge-handler-" + key)).isEqualTo(2);
		assertThat(this.runs.of("pay-n-1")).isEqualTo(1);
	}

	@Test
	void aRefusalOfTheTemplateAnsweredByAnExceptionHandlerIsNotStoredEither() {
		assertThat(postQuery("/ledger?entry=e-1&amount=5", TestKeys.newKey()).statusCode()).isEqualTo(200);
		String key = TestKeys.newKey();
		HttpResponse<String> refused = postQuery("/ledger?entry=e-1&amount=7", key);
		assertThat(refused.statusCode()).isEqualTo(422);
		assertThat(refused.body()).isEqualTo("refused: KEY_REUSED");
		HttpResponse<String> retry = postQuery("/ledger?entry=e-1&amount=7", key);
		assertThat(retry.statusCode()).isEqualTo(422);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(this.runs.of("ledger-handler-" + key)).isEqualTo(2);
		assertThat(this.runs.of("ledger-e-1")).isEqualTo(1);
	}

	@Test
	void aRequiredKeyExpressionThatYieldsNullIsA400Problem() {
		HttpResponse<String> response = post("/orders/strict", null, "{\"item\":\"book\"}");
		assertThat(response.statusCode()).isEqualTo(400);
		assertThat(json(response).get("type").asString()).isEqualTo(PROBLEMS + "key-required");
		assertThat(this.runs.of("strict-null-book")).isZero();
	}

	@Test
	void anOptionalKeyExpressionThatYieldsNullRunsUnprotectedWithAWarning(CapturedOutput output) {
		assertThat(post("/orders", null, "{\"item\":\"d-1\"}").statusCode()).isEqualTo(200);
		assertThat(post("/orders", null, "{\"item\":\"d-1\"}").statusCode()).isEqualTo(200);
		assertThat(this.runs.of("create-null-d-1")).isEqualTo(2);
		assertThat(output.getOut()).contains("WARN").contains("#command.requestId");
	}

	private double outcome(String outcome, String operation) {
		Counter counter = this.meters.find(MicrometerIdempotencyListener.METER_NAME)
			.tag("outcome", outcome)
			.tag("operation", operation)
			.counter();
		return (counter != null) ? counter.count() : 0;
	}

	private HttpResponse<String> post(String path, String key, String json) {
		HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + path))
			.timeout(Duration.ofSeconds(30))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(json));
		if (key != null) {
			request.header("Idempotency-Key", key);
		}
		return send(request);
	}

	/** A keyed POST without a body, its parameters in the query. */
	private HttpResponse<String> postQuery(String pathAndQuery, String key) {
		return send(HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + pathAndQuery))
			.timeout(Duration.ofSeconds(30))
			.header("Idempotency-Key", key)
			.POST(HttpRequest.BodyPublishers.noBody()));
	}

	private static HttpResponse<String> send(HttpRequest.Builder request) {
		try {
			return CLIENT.send(request.build(), HttpResponse.BodyHandlers.ofString());
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private static JsonNode json(HttpResponse<String> response) {
		return JSON.readTree(response.body());
	}

}
