package dev.idempotency.actuate;

import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;

import dev.idempotency.core.IdempotencyTemplate;
import dev.idempotency.core.IdempotentRequest;
import dev.idempotency.core.ResultCodec;
import dev.idempotency.test.TestKeys;
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
 * The {@code idempotency} endpoint exposed over real HTTP: a completed record shows its
 * status, a key in flight its lease owner, and removing a key in flight lets its retry
 * run; keys are looked up as their format stores them (the application's keys are opaque
 * here, as sent), and a key alone lists its records in every scope where the store can
 * find it so. One subclass per store.
 */
@SpringBootTest(classes = EndpointTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.endpoints.web.exposure.include=idempotency", "idempotency.in-flight.wait=0s",
				"idempotency.key.format=opaque" })
@ExtendWith(OutputCaptureExtension.class)
abstract class IdempotencyEndpointOverHttpTests {

	private final HttpClient http = HttpClient.newHttpClient();

	private final JsonMapper json = new JsonMapper();

	@LocalServerPort
	private int port;

	@Autowired
	private EndpointTestApplication.Orders orders;

	@Autowired
	private IdempotencyTemplate template;

	/**
	 * Whether the store finds a key without its scope; one that would read every record
	 * answers such a read 400 instead.
	 */
	protected boolean findsAKeyWithoutItsScope() {
		return true;
	}

	@Test
	void aCompletedRecordShowsItsStatusAndAFingerprintPrefix() throws Exception {
		String key = TestKeys.newKey();
		this.orders.open(key);
		assertThat(post("/orders", key).statusCode()).isEqualTo(201);

		HttpResponse<String> found = send("GET", query(key, "anonymous"));
		assertThat(found.statusCode()).isEqualTo(200);
		JsonNode records = this.json.readTree(found.body());
		assertThat(records.get("key").asString()).isEqualTo(key);
		assertThat(records.get("truncated").asBoolean()).isFalse();
		assertThat(records.get("records")).hasSize(1);
		JsonNode record = records.get("records").get(0);
		assertThat(record.get("scope").asString()).isEqualTo("anonymous");
		assertThat(record.get("key").asString()).isEqualTo(key);
		assertThat(record.get("state").asString()).isEqualTo("completed");
		assertThat(record.get("status").asInt()).isEqualTo(201);
		assertThat(record.get("fingerprint").asString()).matches("[0-9a-f]{12}");
		assertThat(record.get("operation").asString()).isEqualTo("Orders.create");
		assertThat(record.get("created").asString()).matches("\\d{4}-\\d\\d-\\d\\dT.*Z");
		assertThat(record.get("expires").asString()).matches("\\d{4}-\\d\\d-\\d\\dT.*Z");
		assertThat(record.has("leaseOwner")).as("what a completed record has not is left out").isFalse();
		assertThat(record.has("leaseExpires")).isFalse();

		assertThat(send("GET", query(key, "user:someone-else")).statusCode()).as("another scope's record")
			.isEqualTo(404);
		assertThat(send("GET", query(TestKeys.newKey(), "anonymous")).statusCode()).isEqualTo(404);
	}

	/**
	 * Opaque keys that differ in case only are two keys: the endpoint reads and removes
	 * the one named, and the other client's retry still replays. (It used to take the
	 * lower-case record for the upper-case key.)
	 */
	@Test
	void withOpaqueKeysTheKeyNamedIsReadAndRemovedNotItsLowerCase(CapturedOutput output) throws Exception {
		String lower = TestKeys.newKey();
		String upper = lower.toUpperCase(Locale.ROOT);
		this.orders.open(lower);
		this.orders.open(upper);
		assertThat(post("/orders", lower).statusCode()).isEqualTo(201);
		assertThat(post("/orders", upper).statusCode()).isEqualTo(201);

		HttpResponse<String> found = send("GET", query(upper, "anonymous"));
		assertThat(found.statusCode()).isEqualTo(200);
		assertThat(this.json.readTree(found.body()).get("key").asString()).isEqualTo(upper);
		assertThat(send("GET", query("\"" + lower + "\"", "anonymous")).statusCode()).as("quotes make another key")
			.isEqualTo(404);

		assertThat(send("DELETE", query(upper, "anonymous")).statusCode()).isEqualTo(204);
		assertThat(output).contains("Idempotency record removed by anonymous: key=" + upper + " ");
		assertThat(send("GET", query(upper, "anonymous")).statusCode()).isEqualTo(404);
		assertThat(send("GET", query(lower, "anonymous")).statusCode()).as("the other key's record stays")
			.isEqualTo(200);
		HttpResponse<String> lowerRetry = post("/orders", lower);
		assertThat(lowerRetry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(this.orders.runs(lower)).isEqualTo(1);
		assertThat(post("/orders", upper).statusCode()).isEqualTo(201);
		assertThat(this.orders.runs(upper)).as("the key removed runs again").isEqualTo(2);
	}

	@Test
	void aUuidKeyIsFoundWhateverItsCaseInTheFormatNamed() throws Exception {
		String key = TestKeys.newKey();
		this.orders.open(key);
		assertThat(post("/uuid-orders", key).statusCode()).isEqualTo(201);
		String upper = key.toUpperCase(Locale.ROOT);
		HttpResponse<String> found = send("GET", query(upper, "anonymous") + "&format=uuid-v7");
		assertThat(found.statusCode()).isEqualTo(200);
		assertThat(this.json.readTree(found.body()).get("key").asString()).isEqualTo(key);
		assertThat(send("GET", query(upper, "anonymous")).statusCode()).as("as an opaque key it is another key")
			.isEqualTo(404);
	}

	/**
	 * An operator with a key from a client's log and no idea of its scope: the key alone
	 * lists its records with their scopes and doors (an anonymous request's over HTTP,
	 * and two users' template calls, which a method call's namespace keeps apart), where
	 * the store can find a key so; otherwise a 400 that says to give the scope. A removal
	 * names its scope, and its door where both doors keep the key in that scope.
	 */
	@Test
	void theKeyAloneListsItsRecordsWithTheirScopes() throws Exception {
		String key = TestKeys.newKey();
		this.orders.open(key);
		IdempotentRequest request = IdempotentRequest.of(key, "Orders.create", new byte[] { 1 });
		this.template.execute(request.inScope("user:bob"), ResultCodec.utf8(), () -> "bob's");
		assertThat(post("/orders", key).statusCode()).isEqualTo(201);
		this.template.execute(request.inScope("user:alice"), ResultCodec.utf8(), () -> "alice's");

		HttpResponse<String> listed = send("GET", query(key, null));
		if (findsAKeyWithoutItsScope()) {
			assertThat(listed.statusCode()).isEqualTo(200);
			JsonNode records = this.json.readTree(listed.body());
			assertThat(records.get("key").asString()).isEqualTo(key);
			assertThat(records.get("records").valueStream().map((record) -> record.get("scope").asString()))
				.containsExactly("anonymous", "user:alice", "user:bob");
			assertThat(records.get("records").valueStream().map((record) -> record.get("door").asString()))
				.containsExactly("http", "method", "method");
			assertThat(records.get("records").get(1).get("key").asString()).isEqualTo("method " + key);
		}
		else {
			assertBadRequest(listed, "only by its key and scope");
		}
		HttpResponse<String> alice = send("GET", query(key, "user:alice"));
		assertThat(alice.statusCode()).isEqualTo(200);
		assertThat(this.json.readTree(alice.body()).get("records").get(0).get("scope").asString())
			.isEqualTo("user:alice");

		assertBadRequest(send("DELETE", query(key, null)), "give its scope");
		assertThat(send("DELETE", query(key, "user:alice")).statusCode()).isEqualTo(204);
		assertThat(send("GET", query(key, "user:bob")).statusCode()).isEqualTo(200);

		this.template.execute(request.inScope("anonymous"), ResultCodec.utf8(), () -> "the handler's own call");
		assertBadRequest(send("DELETE", query(key, "anonymous")), "door=http or door=method");
		assertThat(send("DELETE", query(key, "anonymous") + "&door=method").statusCode()).isEqualTo(204);
		HttpResponse<String> retry = post("/orders", key);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).as("the request's record stays").hasValue("true");
		assertThat(this.orders.runs(key)).isEqualTo(1);
	}

	@Test
	void aKeyNoFormatAcceptsOrAnUnknownFormatIsA400ThatSaysWhy() throws Exception {
		assertBadRequest(send("GET", query("has space", "anonymous")), "visible ASCII");
		assertBadRequest(send("GET", query(TestKeys.newKey(), "anonymous") + "&format=xml"),
				"format must be uuid-v7, uuid or opaque");
		assertBadRequest(send("GET", query("order-7", "anonymous") + "&format=uuid-v7"), "UUID");
	}

	@Test
	void removingAKeyInFlightLetsItsRetryRun(CapturedOutput output) throws Exception {
		String key = TestKeys.newKey();
		CompletableFuture<HttpResponse<String>> first = CompletableFuture.supplyAsync(() -> {
			try {
				return post("/orders", key);
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
		});
		awaitRuns(key, 1);
		JsonNode inFlight = this.json.readTree(send("GET", query(key, "anonymous")).body()).get("records").get(0);
		assertThat(inFlight.get("state").asString()).isEqualTo("in-flight");
		assertThat(inFlight.hasNonNull("leaseOwner")).isTrue();
		assertThat(inFlight.hasNonNull("leaseExpires")).isTrue();
		assertThat(post("/orders", key).statusCode()).as("the retry finds its key in flight").isEqualTo(409);

		assertThat(send("DELETE", query(key, "anonymous")).statusCode()).isEqualTo(204);
		assertThat(output).contains("Idempotency record removed by anonymous: key=" + key)
			.contains("state=in-flight operation=Orders.create");

		this.orders.open(key);
		HttpResponse<String> retry = post("/orders", key);
		assertThat(retry.statusCode()).isEqualTo(201);
		assertThat(this.json.readTree(retry.body()).get("run").asInt()).isEqualTo(2);
		assertThat(this.orders.runs(key)).isEqualTo(2);
		first.get();

		// The retry's answer is the record now; removing it lets the key run again.
		assertThat(send("DELETE", query(key, "anonymous")).statusCode()).isEqualTo(204);
		assertThat(send("DELETE", query(key, "anonymous")).statusCode()).isEqualTo(404);
		assertThat(post("/orders", key).statusCode()).isEqualTo(201);
		assertThat(this.orders.runs(key)).isEqualTo(3);
	}

	/** A 400 in problem details, whose detail says why. */
	protected void assertBadRequest(HttpResponse<String> response, String why) throws Exception {
		assertThat(response.statusCode()).as(response.body()).isEqualTo(400);
		assertThat(response.headers().firstValue("Content-Type"))
			.hasValueSatisfying((type) -> assertThat(type).startsWith("application/problem+json"));
		JsonNode problem = this.json.readTree(response.body());
		assertThat(problem.get("status").asInt()).isEqualTo(400);
		assertThat(problem.get("detail").asString()).contains(why);
	}

	private void awaitRuns(String key, int runs) throws InterruptedException {
		long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
		while (this.orders.runs(key) < runs) {
			if (System.nanoTime() > deadline) {
				throw new IllegalStateException("the handler never ran for " + key);
			}
			Thread.sleep(10);
		}
	}

	private HttpResponse<String> post(String path, String key) throws Exception {
		return this.http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.header("Idempotency-Key", key)
			.header("X-Gate", key)
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString("{}"))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

	protected static String query(String key, String scope) {
		return "key=" + URLEncoder.encode(key, StandardCharsets.UTF_8)
				+ ((scope != null) ? "&scope=" + URLEncoder.encode(scope, StandardCharsets.UTF_8) : "");
	}

	protected HttpResponse<String> send(String method, String query) throws Exception {
		return this.http
			.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/actuator/idempotency?" + query))
				.method(method, HttpRequest.BodyPublishers.noBody())
				.build(), HttpResponse.BodyHandlers.ofString());
	}

}
