package dev.idempotency.store.seal;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

import dev.idempotency.core.internal.Fingerprints;
import dev.idempotency.test.TestKeys;
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
 * With one key in the application's properties, what a store keeps of a keyed POST's
 * answer, read from the store's server as an intruder would: no byte of the answer in
 * clear, a retry replayed byte for byte, stored answers swapped between two keys refused
 * instead of replayed, and the {@code idempotency} endpoint's fingerprint prefix no
 * longer a way to guess a short field of the request. One subclass per store server.
 */
@SpringBootTest(classes = SealingTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "management.endpoints.web.exposure.include=idempotency",
				"idempotency.encryption.keys.k1=" + SealedAnswersOverHttpTests.KEY_1,
				"idempotency.encryption.sealing-key-id=k1" })
@ExtendWith(OutputCaptureExtension.class)
abstract class SealedAnswersOverHttpTests {

	/** The base64 of 32 bytes, as {@code openssl rand -base64 32} prints one. */
	static final String KEY_1 = "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=";

	private final HttpClient http = HttpClient.newHttpClient();

	private final JsonMapper json = new JsonMapper();

	@LocalServerPort
	private int port;

	@Autowired
	private SealingTestApplication.Receipts receipts;

	@Autowired
	private MeterRegistry meters;

	/** The bytes the store's server holds as the answer of the record of {@code key}. */
	abstract byte[] storedAnswer(String key) throws Exception;

	/** Swaps, on the store's server, the stored answers of two records. */
	abstract void swapStoredAnswers(String key, String otherKey) throws Exception;

	@Test
	void aKeyedPostStoresNoByteOfItsAnswerInClearAndItsRetryIsReplayedByteForByte() throws Exception {
		String key = TestKeys.newKey();
		String holder = "holder-" + UUID.randomUUID();
		HttpResponse<String> first = post(key, "{\"holder\":\"" + holder + "\"}");
		assertThat(first.statusCode()).isEqualTo(201);
		assertThat(first.body()).contains(holder);
		assertThat(first.headers().firstValue("Location")).hasValue("/receipts/" + holder);

		String stored = new String(storedAnswer(key), StandardCharsets.ISO_8859_1);
		assertThat(stored).as("the body and the Location header are not in the store in clear")
			.doesNotContain(holder)
			.doesNotContain("/receipts/")
			.doesNotContain("application/json");

		HttpResponse<String> retry = post(key, "{\"holder\":\"" + holder + "\"}");
		assertThat(retry.statusCode()).isEqualTo(201);
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(retry.headers().firstValue("Location")).isEqualTo(first.headers().firstValue("Location"));
		assertThat(retry.headers().firstValue("Content-Type")).isEqualTo(first.headers().firstValue("Content-Type"));
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(this.receipts.runs(holder)).isOne();
	}

	@Test
	void storedAnswersSwappedBetweenTwoKeysAreNeitherReplayedNorRunAgain(CapturedOutput output) throws Exception {
		String alice = "alice-" + UUID.randomUUID();
		String bob = "bob-" + UUID.randomUUID();
		String aliceKey = TestKeys.newKey();
		String bobKey = TestKeys.newKey();
		assertThat(post(aliceKey, "{\"holder\":\"" + alice + "\"}").statusCode()).isEqualTo(201);
		assertThat(post(bobKey, "{\"holder\":\"" + bob + "\"}").statusCode()).isEqualTo(201);
		double failuresBefore = integrityFailures();

		swapStoredAnswers(aliceKey, bobKey);

		HttpResponse<String> aliceRetry = post(aliceKey, "{\"holder\":\"" + alice + "\"}");
		HttpResponse<String> bobRetry = post(bobKey, "{\"holder\":\"" + bob + "\"}");
		for (HttpResponse<String> retry : List.of(aliceRetry, bobRetry)) {
			assertThat(retry.statusCode()).as(retry.body()).isEqualTo(500);
			assertThat(retry.headers().firstValue("Content-Type")).hasValue("application/problem+json");
			JsonNode problem = this.json.readTree(retry.body());
			assertThat(problem.get("type").asString()).endsWith("/integrity-check-failed");
			assertThat(problem.get("detail").asString()).contains("failed its integrity check");
			assertThat(retry.body()).doesNotContain(alice).doesNotContain(bob);
		}
		assertThat(this.receipts.runs(alice)).as("not run again").isOne();
		assertThat(this.receipts.runs(bob)).isOne();
		assertThat(integrityFailures() - failuresBefore).isEqualTo(2);
		assertThat(output).contains("Stored answer of idempotency record key=" + aliceKey)
			.contains("failed its integrity check")
			.doesNotContain(alice)
			.doesNotContain(bob);

		// The operator sees the record without its answer, and removes it: the key runs
		// again.
		HttpResponse<String> inspected = endpoint("GET", aliceKey);
		assertThat(inspected.statusCode()).isEqualTo(200);
		JsonNode record = this.json.readTree(inspected.body()).get("records").get(0);
		assertThat(record.get("integrity").asString()).isEqualTo("failed");
		assertThat(record.has("status")).isFalse();
		assertThat(inspected.body()).doesNotContain(alice).doesNotContain(bob);
		assertThat(endpoint("DELETE", aliceKey).statusCode()).isEqualTo(204);
		HttpResponse<String> afterRemoval = post(aliceKey, "{\"holder\":\"" + alice + "\"}");
		assertThat(afterRemoval.statusCode()).isEqualTo(201);
		assertThat(afterRemoval.body()).contains(alice);
		assertThat(this.receipts.runs(alice)).isEqualTo(2);
	}

	/**
	 * The attack: a request's body holds a 4-digit pin; the endpoint shows the first 12
	 * hex digits of its fingerprint; 10,000 guesses of the SHA-256 the door computes
	 * (method, path, query, media type, body) find the pin. Keyed under a key the
	 * attacker does not have, none of them matches; with the key, the one pin does, so
	 * the guesses are the door's fingerprints.
	 */
	@Test
	void theEndpointsFingerprintPrefixNoLongerGivesAwayAShortFieldOfTheRequest() throws Exception {
		String key = TestKeys.newKey();
		String pin = String.format("%04d", ThreadLocalRandom.current().nextInt(10_000));
		assertThat(post(key, pinBody(pin)).statusCode()).isEqualTo(201);
		String prefix = this.json.readTree(endpoint("GET", key).body())
			.get("records")
			.get(0)
			.get("fingerprint")
			.asString();
		assertThat(prefix).matches("[0-9a-f]{12}");

		assertThat(pinsMatching(prefix, Sealing.none())).as("pins an attacker without the key finds").isEmpty();

		Sealing withTheKey = Sealing.of(SealingKeys.of(Map.of("k1", Base64.getDecoder().decode(KEY_1)), "k1"), false);
		assertThat(pinsMatching(prefix, withTheKey)).as("with the key, the door's own fingerprint")
			.containsExactly(pin);
	}

	private static List<String> pinsMatching(String prefix, Sealing sealing) {
		List<String> found = new ArrayList<>();
		for (int guess = 0; guess < 10_000; guess++) {
			String pin = String.format("%04d", guess);
			String fingerprint = sealing.fingerprint(Fingerprints.http("POST", "/receipts", null,
					"application/json;charset=utf-8", pinBody(pin).getBytes(StandardCharsets.UTF_8)));
			if (fingerprint.startsWith(prefix)) {
				found.add(pin);
			}
		}
		return found;
	}

	private static String pinBody(String pin) {
		return "{\"pin\":\"" + pin + "\"}";
	}

	private double integrityFailures() {
		return this.meters.find("idempotency.requests")
			.tag("outcome", "integrity_failure")
			.counters()
			.stream()
			.mapToDouble(io.micrometer.core.instrument.Counter::count)
			.sum();
	}

	private HttpResponse<String> post(String key, String body) throws Exception {
		return this.http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/receipts"))
			.header("Idempotency-Key", key)
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(body))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

	private HttpResponse<String> endpoint(String method, String key) throws Exception {
		return this.http.send(HttpRequest
			.newBuilder(
					URI.create("http://127.0.0.1:" + this.port + "/actuator/idempotency?scope=anonymous&key=" + key))
			.method(method, HttpRequest.BodyPublishers.noBody())
			.build(), HttpResponse.BodyHandlers.ofString());
	}

}
