package dev.idempotency.actuate;

import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

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
 * run. One subclass per store.
 */
@SpringBootTest(classes = EndpointTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.endpoints.web.exposure.include=idempotency", "idempotency.in-flight.wait=0s" })
@ExtendWith(OutputCaptureExtension.class)
abstract class IdempotencyEndpointOverHttpTests {

	private final HttpClient http = HttpClient.newHttpClient();

	private final JsonMapper json = new JsonMapper();

	@LocalServerPort
	private int port;

	@Autowired
	private EndpointTestApplication.Orders orders;

	@Test
	void aCompletedRecordShowsItsStatusAndAFingerprintPrefix() throws Exception {
		String key = TestKeys.newKey();
		this.orders.open(key);
		assertThat(post(key).statusCode()).isEqualTo(201);

		// A UUID is found whatever its case, as the engine keeps it canonical.
		HttpResponse<String> found = send("GET", key.toUpperCase(java.util.Locale.ROOT), null);
		assertThat(found.statusCode()).isEqualTo(200);
		JsonNode record = this.json.readTree(found.body());
		assertThat(record.get("key").asString()).isEqualTo(key);
		assertThat(record.get("state").asString()).isEqualTo("completed");
		assertThat(record.get("status").asInt()).isEqualTo(201);
		assertThat(record.get("fingerprint").asString()).matches("[0-9a-f]{12}");
		assertThat(record.get("operation").asString()).isEqualTo("Orders.create");
		assertThat(record.get("created").asString()).matches("\\d{4}-\\d\\d-\\d\\dT.*Z");
		assertThat(record.get("expires").asString()).matches("\\d{4}-\\d\\d-\\d\\dT.*Z");
		assertThat(record.has("leaseOwner")).as("what a completed record has not is left out").isFalse();
		assertThat(record.has("leaseExpires")).isFalse();

		assertThat(send("GET", key, "user:someone-else").statusCode()).as("another scope's record").isEqualTo(404);
		assertThat(send("GET", TestKeys.newKey(), null).statusCode()).isEqualTo(404);
	}

	@Test
	void removingAKeyInFlightLetsItsRetryRun(CapturedOutput output) throws Exception {
		String key = TestKeys.newKey();
		CompletableFuture<HttpResponse<String>> first = CompletableFuture.supplyAsync(() -> {
			try {
				return post(key);
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
		});
		awaitRuns(key, 1);
		JsonNode inFlight = this.json.readTree(send("GET", key, null).body());
		assertThat(inFlight.get("state").asString()).isEqualTo("in-flight");
		assertThat(inFlight.hasNonNull("leaseOwner")).isTrue();
		assertThat(inFlight.hasNonNull("leaseExpires")).isTrue();
		assertThat(post(key).statusCode()).as("the retry finds its key in flight").isEqualTo(409);

		assertThat(send("DELETE", key, null).statusCode()).isEqualTo(204);
		assertThat(output).contains("Idempotency record removed by anonymous: key=" + key)
			.contains("state=in-flight operation=Orders.create");

		this.orders.open(key);
		HttpResponse<String> retry = post(key);
		assertThat(retry.statusCode()).isEqualTo(201);
		assertThat(this.json.readTree(retry.body()).get("run").asInt()).isEqualTo(2);
		assertThat(this.orders.runs(key)).isEqualTo(2);
		first.get();

		// The retry's answer is the record now; removing it lets the key run again.
		assertThat(send("DELETE", key, "anonymous").statusCode()).isEqualTo(204);
		assertThat(send("DELETE", key, null).statusCode()).isEqualTo(404);
		assertThat(post(key).statusCode()).isEqualTo(201);
		assertThat(this.orders.runs(key)).isEqualTo(3);
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

	private HttpResponse<String> post(String key) throws Exception {
		return this.http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/orders"))
			.header("Idempotency-Key", key)
			.header("X-Gate", key)
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString("{}"))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

	private HttpResponse<String> send(String method, String key, String scope) throws Exception {
		String query = "key=" + URLEncoder.encode(key, StandardCharsets.UTF_8)
				+ ((scope != null) ? "&scope=" + URLEncoder.encode(scope, StandardCharsets.UTF_8) : "");
		return this.http
			.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/actuator/idempotency?" + query))
				.method(method, HttpRequest.BodyPublishers.noBody())
				.build(), HttpResponse.BodyHandlers.ofString());
	}

}
