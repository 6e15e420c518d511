package dev.idempotency.web.keys;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;

import dev.idempotency.test.TestKeys;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Keys in each format over real HTTP, with {@code idempotency.key.format=opaque} for the
 * application and {@code @Idempotent(keyFormat = ...)} overriding it per operation. One
 * subclass per store: every store must keep 255-character keys of any visible ASCII
 * character apart, per scope.
 */
@SpringBootTest(classes = KeyFormatTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = "idempotency.key.format=opaque")
abstract class KeyFormatsOverHttpTests {

	private static final String PROBLEM = "https://idempotency.dev/problems/";

	/** Every visible ASCII character, '!' to '~'. */
	private static final String VISIBLE_ASCII;

	static {
		StringBuilder chars = new StringBuilder();
		for (char c = '!'; c <= '~'; c++) {
			chars.append(c);
		}
		VISIBLE_ASCII = chars.toString();
	}

	private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	@LocalServerPort
	private int port;

	@Autowired
	private KeyFormatTestApplication.KeyController controller;

	/** A key of this run's own of the given length, ending in {@code tail}. */
	private static String key(int length, String tail) {
		String head = "k" + UUID.randomUUID().toString().substring(0, 8) + "-";
		StringBuilder key = new StringBuilder(head);
		while (key.length() < length - tail.length()) {
			key.append(VISIBLE_ASCII.charAt(key.length() % VISIBLE_ASCII.length()));
		}
		return key.append(tail).toString();
	}

	@ParameterizedTest
	@ValueSource(ints = { 1, 36, 64, 65, 200, 255 })
	void anOpaqueKeyOfAnyVisibleAsciiCharactersUpTo255RunsOnceAndIsReplayed(int length) throws Exception {
		String key = (length == 1) ? "!" : key(length, "\"%:{}");
		if (length == 1) {
			// One character: this run's own tenant keeps it apart from other runs.
			String tenant = "single-" + UUID.randomUUID();
			HttpResponse<String> first = post("/keys/default", tenant, key, "one");
			HttpResponse<String> retry = post("/keys/default", tenant, key, "one");
			assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
			assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
			assertThat(this.controller.runs(tenant, key)).isEqualTo(1);
			return;
		}
		assertThat(key).hasSize(length);
		HttpResponse<String> first = post("/keys/default", "t", key, "body");
		HttpResponse<String> retry = post("/keys/default", "t", key, "body");
		HttpResponse<String> other = post("/keys/default", "t", key, "another body");
		assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
		assertThat(retry.statusCode()).isEqualTo(200);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(other.statusCode()).as(other.body()).isEqualTo(422);
		assertThat(this.controller.runs("t", key)).isEqualTo(1);
	}

	@Test
	void longKeysThatShareTheirFirst254CharactersAreTwoKeys() throws Exception {
		String a = key(255, "a");
		String b = a.substring(0, 254) + "b";
		assertThat(post("/keys/default", "t", a, "first").statusCode()).isEqualTo(200);
		HttpResponse<String> second = post("/keys/default", "t", b, "second");
		assertThat(second.statusCode()).as(second.body()).isEqualTo(200);
		assertThat(second.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(this.controller.runs("t", b)).isEqualTo(1);
	}

	@Test
	void keysThatDifferOnlyInCaseAreTwoKeys() throws Exception {
		String lower = "order-" + UUID.randomUUID();
		String upper = lower.toUpperCase();
		assertThat(post("/keys/default", "t", lower, "lower").statusCode()).isEqualTo(200);
		HttpResponse<String> second = post("/keys/default", "t", upper, "upper");
		assertThat(second.statusCode()).as(second.body()).isEqualTo(200);
		assertThat(second.body()).contains("upper");
		assertThat(this.controller.runs("t", upper)).isEqualTo(1);
	}

	@Test
	void aKeyIsNeverAnotherScopesKeyWhateverItsCharacters() throws Exception {
		String id = UUID.randomUUID().toString();
		// Scope and key joined naively with ':' would be "tenant:<id>:x:y" both times.
		HttpResponse<String> first = post("/keys/default", id, "x:y", "first");
		HttpResponse<String> second = post("/keys/default", id + ":x", "y", "second");
		// The same key in a scope whose name differs in case only.
		HttpResponse<String> third = post("/keys/default", id.toUpperCase(), "x:y", "third");
		// Percent-encoding is not decoded: "x%3Ay" is its own key.
		HttpResponse<String> fourth = post("/keys/default", id, "x%3Ay", "fourth");
		for (HttpResponse<String> response : java.util.List.of(first, second, third, fourth)) {
			assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
			assertThat(response.headers().firstValue("Idempotent-Replayed")).isEmpty();
		}
		assertThat(second.body()).contains("second");
		assertThat(third.body()).contains("third");
		assertThat(fourth.body()).contains("fourth");
	}

	@ParameterizedTest
	@ValueSource(strings = { "with space", "tab\there", "256" })
	void anOpaqueKeyOutsideVisibleAsciiOrLongerThan255IsRefused(String raw) throws Exception {
		String key = raw.equals("256") ? key(256, "") : raw;
		HttpResponse<String> response = post("/keys/default", "t", key, "body");
		assertThat(response.statusCode()).as(response.body()).isEqualTo(400);
		assertThat(response.body()).contains(PROBLEM + "invalid-key");
	}

	@Test
	void anOpaqueKeyHasNoKeyAgeWindowEvenWhenItLooksLikeAUuidV7() throws Exception {
		String old = TestKeys.at(Instant.parse("2001-01-01T00:00:00Z"));
		HttpResponse<String> response = post("/keys/default", "t", old, "body");
		assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
	}

	@Test
	void anOperationCanAskForAnyUuidAndTheWindowAppliesToUuidV7KeysOnly() throws Exception {
		String v4 = UUID.randomUUID().toString();
		HttpResponse<String> first = post("/keys/uuid", "t", v4.toUpperCase(), "body");
		HttpResponse<String> retry = post("/keys/uuid", "t", "\"" + v4 + "\"", "body");
		assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(this.controller.runs("t", v4.toUpperCase())).isEqualTo(1);

		assertThat(post("/keys/uuid", "t", "order-42", "body").statusCode()).isEqualTo(400);
		HttpResponse<String> oldV7 = post("/keys/uuid", "t", TestKeys.at(Instant.parse("2001-01-01T00:00:00Z")),
				"body");
		assertThat(oldV7.statusCode()).isEqualTo(400);
		assertThat(oldV7.body()).contains("older than its lifetime");
		assertThat(post("/keys/uuid", "t", TestKeys.newKey(), "body").statusCode()).isEqualTo(200);
		// Version 0 is not an RFC 9562 version; variant 0xxx is not the RFC's variant.
		assertThat(post("/keys/uuid", "t", "0190a8f2-1c2d-0e4f-8a6b-7c8d9e0f1a2b", "body").statusCode()).isEqualTo(400);
		assertThat(post("/keys/uuid", "t", "0190a8f2-1c2d-4e4f-0a6b-7c8d9e0f1a2b", "body").statusCode()).isEqualTo(400);
	}

	@Test
	void anOperationCanInsistOnUuidV7() throws Exception {
		HttpResponse<String> v4 = post("/keys/uuidv7", "t", UUID.randomUUID().toString(), "body");
		assertThat(v4.statusCode()).isEqualTo(400);
		assertThat(v4.body()).contains("version 7");
		assertThat(post("/keys/uuidv7", "t", "order-42", "body").statusCode()).isEqualTo(400);
		assertThat(post("/keys/uuidv7", "t", TestKeys.newKey(), "body").statusCode()).isEqualTo(200);
	}

	private HttpResponse<String> post(String path, String tenant, String key, String body)
			throws IOException, InterruptedException {
		return this.http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.header("Idempotency-Key", key)
			.header("X-Tenant", tenant)
			.header("Content-Type", "text/plain")
			.timeout(Duration.ofSeconds(30))
			.POST(HttpRequest.BodyPublishers.ofString(body))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

}
