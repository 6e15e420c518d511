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
 * What makes two keyed requests the same request, over real HTTP against embedded Tomcat:
 * the media type the body is sent as is part of it, normalised; the query as the handler
 * receives it, decoded.
 */
@SpringBootTest(classes = HttpDoorTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class FingerprintOverHttpTests {

	private static final String PROBLEM = "https://idempotency.dev/problems/";

	private static final String BODY = "{\"name\":\"orders\",\"size\":1}";

	private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	@LocalServerPort
	private int port;

	@Autowired
	private HttpDoorTestApplication.GatedController controller;

	@Autowired
	private IdempotencyStore store;

	@Test
	void theSameBytesSentAsAnotherMediaTypeAreAnotherRequest() throws Exception {
		String key = TestKeys.newKey();
		HttpResponse<String> first = post(key, "application/json", BODY);
		assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
		int runs = this.controller.runs("json");

		// Run fresh, the handler refuses text/plain: replaying the stored 200 would
		// answer a request the server never accepted.
		HttpResponse<String> fresh = post(TestKeys.newKey(), "text/plain", BODY);
		assertThat(fresh.statusCode()).isEqualTo(415);

		HttpResponse<String> retry = post(key, "text/plain", BODY);
		assertThat(retry.statusCode()).as(retry.body()).isEqualTo(422);
		assertThat(retry.body()).contains(PROBLEM + "key-reused");
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).isEmpty();
		assertThat(this.controller.runs("json")).isEqualTo(runs);
	}

	@ParameterizedTest
	@ValueSource(strings = { "application/json", "Application/JSON", "application/json;charset=UTF-8",
			"application/json; charset=utf-8", "application/json ; Charset=\"utf8\"" })
	void theMediaTypeIsComparedNormalisedAndJsonWithoutCharsetIsUtf8(String contentType) throws Exception {
		String key = TestKeys.newKey();
		HttpResponse<String> first = post(key, "application/json; charset=utf-8", BODY);
		assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
		HttpResponse<String> retry = post(key, contentType, BODY);
		assertThat(retry.statusCode()).as(retry.body()).isEqualTo(200);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.body()).isEqualTo(first.body());
	}

	@ParameterizedTest
	@ValueSource(strings = { "application/json; charset=utf-16", "application/merge-patch+json",
			"text/plain; charset=utf-8" })
	void anotherCharsetOrSubtypeIsAnotherRequest(String contentType) throws Exception {
		String key = TestKeys.newKey();
		assertThat(post(key, "application/json", BODY).statusCode()).isEqualTo(200);
		HttpResponse<String> retry = post(key, contentType, BODY);
		assertThat(retry.statusCode()).as(retry.body()).isEqualTo(422);
	}

	@Test
	void aBodyWithoutContentTypeIsAnotherRequestThanOneWithIt() throws Exception {
		// The echo handler reads any media type as a string.
		String key = TestKeys.newKey();
		HttpResponse<String> first = this.http.send(HttpRequest.newBuilder(uri("/echo"))
			.header("Idempotency-Key", key)
			.timeout(Duration.ofSeconds(30))
			.POST(HttpRequest.BodyPublishers.ofString(BODY))
			.build(), HttpResponse.BodyHandlers.ofString());
		assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
		HttpResponse<String> retry = this.http.send(HttpRequest.newBuilder(uri("/echo"))
			.header("Idempotency-Key", key)
			.header("Content-Type", "text/plain")
			.timeout(Duration.ofSeconds(30))
			.POST(HttpRequest.BodyPublishers.ofString(BODY))
			.build(), HttpResponse.BodyHandlers.ofString());
		assertThat(retry.statusCode()).as(retry.body()).isEqualTo(422);
	}

	@Test
	void byDefaultTheSameJsonWithOtherMemberOrderIsAnotherRequest() throws Exception {
		String key = TestKeys.newKey();
		assertThat(post(key, "application/json", "{\"name\":\"orders\",\"size\":1}").statusCode()).isEqualTo(200);
		assertThat(post(key, "application/json", "{\"size\":1,\"name\":\"orders\"}").statusCode()).isEqualTo(422);
	}

	@Test
	void aRecordMadeBeforeTheMediaTypeWasFingerprintedIsStillReplayedToTheSameRequest() throws Exception {
		// What a node of the earlier version stored: the fingerprint without the media
		// type.
		String key = TestKeys.newKey();
		storeEarlierRecord(key, "json",
				Fingerprints.httpWithoutMediaType("POST", "/json", null, BODY.getBytes(StandardCharsets.UTF_8)));
		int runs = this.controller.runs("json");

		HttpResponse<String> retry = post(key, "application/json", BODY);
		assertThat(retry.statusCode()).as(retry.body()).isEqualTo(200);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.body()).isEqualTo("{\"stored\":\"before the upgrade\"}");
		HttpResponse<String> otherBody = post(key, "application/json", "{\"name\":\"other\"}");
		assertThat(otherBody.statusCode()).isEqualTo(422);
		assertThat(this.controller.runs("json")).isEqualTo(runs);
	}

	@Test
	void queryParametersAreComparedAsTheHandlerReceivesThem() throws Exception {
		String key = TestKeys.newKey();
		HttpResponse<String> first = postQuery(key, "a=1&%61=2");
		assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
		assertThat(first.body()).contains("\"a\":[\"1\",\"2\"]");
		int runs = this.controller.runs("params");

		// Run fresh, the handler receives a=[2, 1]: another request, although its names
		// sorted as sent read the same.
		HttpResponse<String> fresh = postQuery(TestKeys.newKey(), "%61=2&a=1");
		assertThat(fresh.body()).contains("\"a\":[\"2\",\"1\"]");
		HttpResponse<String> reordered = postQuery(key, "%61=2&a=1");
		assertThat(reordered.statusCode()).as(reordered.body()).isEqualTo(422);
		assertThat(reordered.body()).contains(PROBLEM + "key-reused");

		// The same parameters, encoded otherwise: the same request.
		HttpResponse<String> encodedOtherwise = postQuery(key, "%61=%31&a=2");
		assertThat(encodedOtherwise.statusCode()).as(encodedOtherwise.body()).isEqualTo(200);
		assertThat(encodedOtherwise.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(encodedOtherwise.body()).isEqualTo(first.body());
		assertThat(this.controller.runs("params")).isEqualTo(runs + 1);
	}

	@Test
	void aPlusIsASpaceAndAnEncodedSeparatorIsPartOfItsValue() throws Exception {
		String key = TestKeys.newKey();
		HttpResponse<String> first = postQuery(key, "q=a+b&v=1%262");
		assertThat(first.body()).contains("\"q\":[\"a b\"]").contains("\"v\":[\"1&2\"]");
		HttpResponse<String> encodedSpace = postQuery(key, "v=1%262&q=a%20b");
		assertThat(encodedSpace.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(encodedSpace.body()).isEqualTo(first.body());
		assertThat(postQuery(key, "q=a%2Bb&v=1%262").statusCode()).as("q=[a+b]").isEqualTo(422);
		assertThat(postQuery(key, "q=a+b&v=1&2").statusCode()).as("v=[1], 2=[]").isEqualTo(422);
		assertThat(postQuery(key, "q=a+b&v=1%3D2").statusCode()).as("v=[1=2]").isEqualTo(422);
	}

	@Test
	void aRecordMadeWhileTheQueryWasComparedAsSentIsReplayedUnlessItsNamesWereAmbiguous() throws Exception {
		// What a node of the earlier version stored: the query's pairs sorted by their
		// names as sent.
		String plain = TestKeys.newKey();
		storeEarlierRecord(plain, "name=caf%C3%A9&tag=a%2Cb");
		HttpResponse<String> retry = postQuery(plain, "name=caf%C3%A9&tag=a%2Cb");
		assertThat(retry.statusCode()).as(retry.body()).isEqualTo(200);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(retry.body()).isEqualTo("{\"stored\":\"before the upgrade\"}");

		// Two names as sent that the handler receives as one: the earlier fingerprint
		// cannot tell a=[1, 2] from a=[2, 1], so it is not trusted.
		String ambiguous = TestKeys.newKey();
		storeEarlierRecord(ambiguous, "a=1&%61=2");
		assertThat(postQuery(ambiguous, "%61=2&a=1").statusCode()).isEqualTo(422);
		assertThat(postQuery(ambiguous, "a=1&%61=2").statusCode()).isEqualTo(422);
	}

	private void storeEarlierRecord(String key, String query) {
		storeEarlierRecord(key, "params", Fingerprints.httpWithQueryAsSent("POST", "/params", query, "text/plain",
				BODY.getBytes(StandardCharsets.UTF_8)));
	}

	/** Stores what a node of an earlier version stored for a request: its answer. */
	private void storeEarlierRecord(String key, String operation, String earlierFingerprint) {
		StoredResponse answer = new StoredResponse(200, Map.of("Content-Type", List.of("application/json")),
				"{\"stored\":\"before the upgrade\"}".getBytes(StandardCharsets.UTF_8));
		assertThat(this.store
			.recordCompleted(new CompletedRecordRequest(new RecordId(PrincipalScopeResolver.ANONYMOUS, key),
					earlierFingerprint, operation, answer, Duration.ofMinutes(5))))
			.isEmpty();
	}

	private HttpResponse<String> postQuery(String key, String query) throws IOException, InterruptedException {
		return this.http.send(HttpRequest.newBuilder(uri("/params?" + query))
			.header("Idempotency-Key", key)
			.header("Content-Type", "text/plain")
			.timeout(Duration.ofSeconds(30))
			.POST(HttpRequest.BodyPublishers.ofString(BODY))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

	private HttpResponse<String> post(String key, String contentType, String body)
			throws IOException, InterruptedException {
		return this.http.send(HttpRequest.newBuilder(uri("/json"))
			.header("Idempotency-Key", key)
			.header("Content-Type", contentType)
			.timeout(Duration.ofSeconds(30))
			.POST(HttpRequest.BodyPublishers.ofString(body))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

	private URI uri(String path) {
		return URI.create("http://127.0.0.1:" + this.port + path);
	}

}
