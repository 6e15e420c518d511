package dev.idempotency.web;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import dev.idempotency.core.internal.Fingerprints;
import dev.idempotency.store.CompletedRecordRequest;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.StoredResponse;
import dev.idempotency.test.TestKeys;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code idempotency.fingerprint.json=canonical} over real HTTP: JSON bodies are compared
 * as JSON, other bodies as bytes.
 */
@SpringBootTest(classes = HttpDoorTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = "idempotency.fingerprint.json=canonical")
class CanonicalJsonFingerprintOverHttpTests {

	private static final String BODY = "{\"name\":\"orders\",\"size\":1,\"tags\":[\"a\",\"b\"]}";

	private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	@LocalServerPort
	private int port;

	@Autowired
	private HttpDoorTestApplication.GatedController controller;

	@Autowired
	private IdempotencyStore store;

	@ParameterizedTest
	@ValueSource(strings = { "{\"tags\":[\"a\",\"b\"],\"size\":1,\"name\":\"orders\"}",
			"{\n  \"name\" : \"orders\",\n  \"size\" : 1.0,\n  \"tags\" : [ \"a\", \"b\" ]\n}\n",
			"{\"name\":\"\\u006frders\",\"size\":1e0,\"tags\":[\"a\",\"b\"]}" })
	void theSameJsonWithOtherMemberOrderWhitespaceOrNumberFormIsReplayed(String retried) throws Exception {
		String key = TestKeys.newKey();
		HttpResponse<String> first = post("/json", key, "application/json", BODY);
		assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
		int runs = this.controller.runs("json");
		HttpResponse<String> retry = post("/json", key, "application/json", retried);
		assertThat(retry.statusCode()).as(retry.body()).isEqualTo(200);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(this.controller.runs("json")).isEqualTo(runs);
	}

	@ParameterizedTest
	@ValueSource(strings = { "{\"name\":\"orders\",\"size\":2,\"tags\":[\"a\",\"b\"]}",
			"{\"name\":\"orders\",\"size\":1,\"tags\":[\"b\",\"a\"]}",
			"{\"name\":\"orders\",\"size\":\"1\",\"tags\":[\"a\",\"b\"]}", "{\"name\":\"orders\",\"size\":1}" })
	void anotherValueArrayOrderOrMemberIsAnotherRequest(String retried) throws Exception {
		String key = TestKeys.newKey();
		assertThat(post("/json", key, "application/json", BODY).statusCode()).isEqualTo(200);
		HttpResponse<String> retry = post("/json", key, "application/json", retried);
		assertThat(retry.statusCode()).as(retry.body()).isEqualTo(422);
	}

	@Test
	void aPlusJsonMediaTypeIsComparedAsJsonToo() throws Exception {
		String key = TestKeys.newKey();
		assertThat(post("/echo", key, "application/merge-patch+json", "{\"a\":1,\"b\":2}").statusCode()).isEqualTo(200);
		HttpResponse<String> retry = post("/echo", key, "application/merge-patch+json", "{ \"b\":2, \"a\":1 }");
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
	}

	@Test
	void invalidJsonIsComparedAsBytes() throws Exception {
		// The echo handler reads the body as a string, so invalid JSON is answered 200.
		String key = TestKeys.newKey();
		assertThat(post("/echo", key, "application/json", "{\"a\":1,").statusCode()).isEqualTo(200);
		HttpResponse<String> same = post("/echo", key, "application/json", "{\"a\":1,");
		HttpResponse<String> spaced = post("/echo", key, "application/json", "{ \"a\":1,");
		assertThat(same.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(spaced.statusCode()).isEqualTo(422);
	}

	@Test
	void otherMediaTypesAreComparedAsBytes() throws Exception {
		String key = TestKeys.newKey();
		assertThat(post("/echo", key, "text/plain", "{\"a\":1,\"b\":2}").statusCode()).isEqualTo(200);
		assertThat(post("/echo", key, "text/plain", "{\"b\":2,\"a\":1}").statusCode()).isEqualTo(422);
	}

	@Test
	void aRecordFingerprintedOverTheBytesBeforeTheSwitchIsReplayedToTheSameBytes() throws Exception {
		// What a node with fingerprint.json=bytes stored for this request.
		String key = TestKeys.newKey();
		String body = "{ \"name\": \"orders\" }";
		String bytesFingerprint = Fingerprints.http("POST", "/json", null, "application/json;charset=utf-8",
				body.getBytes(StandardCharsets.UTF_8));
		StoredResponse answer = new StoredResponse(200, Map.of("Content-Type", List.of("application/json")),
				"{\"stored\":\"by a bytes node\"}".getBytes(StandardCharsets.UTF_8));
		assertThat(this.store
			.recordCompleted(new CompletedRecordRequest(new RecordId(PrincipalScopeResolver.ANONYMOUS, key),
					bytesFingerprint, "json", answer, Duration.ofMinutes(5))))
			.isEmpty();
		HttpResponse<String> retry = post("/json", key, "application/json", body);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.body()).isEqualTo("{\"stored\":\"by a bytes node\"}");
	}

	private HttpResponse<String> post(String path, String key, String contentType, String body)
			throws IOException, InterruptedException {
		return this.http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.header("Idempotency-Key", key)
			.header("Content-Type", contentType)
			.timeout(Duration.ofSeconds(30))
			.POST(HttpRequest.BodyPublishers.ofString(body))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

}
