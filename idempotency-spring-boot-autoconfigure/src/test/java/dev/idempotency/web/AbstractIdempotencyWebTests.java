package dev.idempotency.web;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;

import dev.idempotency.test.TestKeys;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;

/**
 * Every branch of the protocol table through the HTTP front door, one suite for both
 * stacks: each subclass runs it unchanged through {@link WebTestClient} against the same
 * handlers ({@link WebTestApplication}) on its stack (Spring MVC, WebFlux on Netty), with
 * {@code idempotency.web.path-patterns=/pattern/**},
 * {@code idempotency.in-flight.wait=1s} and
 * {@code idempotency.response.max-body-size=1KB}. The principal is the {@code X-User}
 * header, set by the test application's filter of each stack.
 */
abstract class AbstractIdempotencyWebTests {

	static final String PROPERTIES_PATTERN = "idempotency.web.path-patterns=/pattern/**";

	static final String PROPERTIES_WAIT = "idempotency.in-flight.wait=1s";

	static final String PROPERTIES_MAX_BODY = "idempotency.response.max-body-size=1KB";

	static final String PROBLEM = "https://idempotency.dev/problems/";

	@Autowired
	WebTestApplication.Runs controller;

	@Autowired
	WebTestApplication.SwitchableStore store;

	/** The client of the stack under test. */
	abstract WebTestClient client();

	@AfterEach
	void storeUp() {
		this.store.down = false;
		this.controller.reset();
	}

	private WebTestClient.RequestHeadersSpec<?> create(@Nullable String key, String name) {
		WebTestClient.RequestBodySpec request = client().post().uri("/things").contentType(MediaType.APPLICATION_JSON);
		if (key != null) {
			request.header("Idempotency-Key", key);
		}
		return request.bodyValue("{\"name\":\"" + name + "\"}");
	}

	private WebTestClient.RequestHeadersSpec<?> post(String uri, @Nullable String key) {
		WebTestClient.RequestBodySpec request = client().post().uri(uri);
		if (key != null) {
			request.header("Idempotency-Key", key);
		}
		return request;
	}

	@Test
	void aRetryReplaysTheStoredResponseByteExactWithoutRunningAgain() {
		String key = TestKeys.newKey();
		EntityExchangeResult<byte[]> first = create(key, "a").exchange()
			.expectStatus()
			.isCreated()
			.expectHeader()
			.valueEquals("Location", "/things/a")
			.expectHeader()
			.doesNotExist("Idempotent-Replayed")
			.expectBody()
			.returnResult();
		EntityExchangeResult<byte[]> retry = create(key, "a").exchange()
			.expectStatus()
			.isCreated()
			.expectHeader()
			.valueEquals("Location", "/things/a")
			.expectHeader()
			.valueEquals("Idempotent-Replayed", "true")
			.expectHeader()
			.contentType(first.getResponseHeaders().getContentType())
			.expectHeader()
			.doesNotExist("X-Run")
			.expectBody()
			.returnResult();
		assertThat(retry.getResponseBody()).isEqualTo(first.getResponseBody());
		assertThat(this.controller.runs("create")).isEqualTo(1);
	}

	@Test
	void theQuotedAndUpperCaseFormsOfAKeyAreTheSameKey() {
		String key = TestKeys.newKey();
		create(key, "q").exchange().expectStatus().isCreated();
		create("\"" + key.toUpperCase() + "\"", "q").exchange()
			.expectStatus()
			.isCreated()
			.expectHeader()
			.valueEquals("Idempotent-Replayed", "true");
		assertThat(this.controller.runs("create")).isEqualTo(1);
	}

	@Test
	void withoutAKeyTheRequestRunsUnprotected() {
		create(null, "b").exchange().expectStatus().isCreated();
		create(null, "b").exchange().expectStatus().isCreated();
		assertThat(this.controller.runs("create")).isEqualTo(2);
	}

	@Test
	void aRequiredKeyThatIsMissingIs400() {
		post("/required", null).exchange()
			.expectStatus()
			.isBadRequest()
			.expectHeader()
			.contentType("application/problem+json")
			.expectBody()
			.jsonPath("$.type")
			.isEqualTo(PROBLEM + "key-required")
			.jsonPath("$.status")
			.isEqualTo(400)
			.jsonPath("$.detail")
			.isNotEmpty();
		assertThat(this.controller.runs("required")).isZero();
	}

	@ParameterizedTest
	@ValueSource(strings = { "not-a-uuid", "4b1e0c1e-6b7a-4f0e-9c1d-2a3b4c5d6e7f", "", "\"unterminated" })
	void anInvalidKeyIs400AndNothingRuns(String key) {
		create(key, "c").exchange()
			.expectStatus()
			.isBadRequest()
			.expectHeader()
			.contentType("application/problem+json")
			.expectBody()
			.jsonPath("$.type")
			.isEqualTo(PROBLEM + "invalid-key")
			.jsonPath("$.detail")
			.isNotEmpty();
		assertThat(this.controller.runs("create")).isZero();
	}

	@Test
	void twoKeyHeadersAre400() {
		client().post()
			.uri("/things")
			.contentType(MediaType.APPLICATION_JSON)
			.header("Idempotency-Key", TestKeys.newKey(), TestKeys.newKey())
			.bodyValue("{\"name\":\"d\"}")
			.exchange()
			.expectStatus()
			.isBadRequest()
			.expectBody()
			.jsonPath("$.type")
			.isEqualTo(PROBLEM + "invalid-key")
			.jsonPath("$.detail")
			.value(containsString("exactly one"));
		assertThat(this.controller.runs("create")).isZero();
	}

	@Test
	void keysOutsideTheirTimeWindowAre400() {
		String old = TestKeys.at(Instant.now().minus(Duration.ofMinutes(36)));
		create(old, "e").exchange()
			.expectStatus()
			.isBadRequest()
			.expectBody()
			.jsonPath("$.detail")
			.value(containsString("older than"));
		String future = TestKeys.at(Instant.now().plus(Duration.ofMinutes(5)));
		create(future, "e").exchange()
			.expectStatus()
			.isBadRequest()
			.expectBody()
			.jsonPath("$.detail")
			.value(containsString("in the future"));
		assertThat(this.controller.runs("create")).isZero();
	}

	@Test
	void theSameKeyWithAnotherBodyIs422AndChangesNothing() {
		String key = TestKeys.newKey();
		create(key, "f").exchange().expectStatus().isCreated();
		create(key, "other").exchange()
			.expectStatus()
			.isEqualTo(422)
			.expectHeader()
			.contentType("application/problem+json")
			.expectBody()
			.jsonPath("$.type")
			.isEqualTo(PROBLEM + "key-reused")
			.jsonPath("$.status")
			.isEqualTo(422)
			.jsonPath("$.instance")
			.isEqualTo("/things");
		create(key, "f").exchange()
			.expectStatus()
			.isCreated()
			.expectHeader()
			.valueEquals("Idempotent-Replayed", "true")
			.expectBody()
			.jsonPath("$.name")
			.isEqualTo("f");
		assertThat(this.controller.runs("create")).isEqualTo(1);
	}

	@Test
	void theSameKeyOnAnotherPathIs422() {
		String key = TestKeys.newKey();
		create(key, "g").exchange().expectStatus().isCreated();
		post("/cookie", key).exchange()
			.expectStatus()
			.isEqualTo(422)
			.expectBody()
			.jsonPath("$.type")
			.isEqualTo(PROBLEM + "key-reused");
		assertThat(this.controller.runs("cookie")).isZero();
	}

	@Test
	void theOrderOfRepeatedQueryValuesIsPartOfTheRequest() {
		String key = TestKeys.newKey();
		client().post()
			.uri("/things?tag=1&tag=2")
			.contentType(MediaType.APPLICATION_JSON)
			.header("Idempotency-Key", key)
			.bodyValue("{\"name\":\"order\"}")
			.exchange()
			.expectStatus()
			.isCreated();
		client().post()
			.uri("/things?tag=2&tag=1")
			.contentType(MediaType.APPLICATION_JSON)
			.header("Idempotency-Key", key)
			.bodyValue("{\"name\":\"order\"}")
			.exchange()
			.expectStatus()
			.isEqualTo(422)
			.expectBody()
			.jsonPath("$.type")
			.isEqualTo(PROBLEM + "key-reused");
		client().post()
			.uri("/things?tag=1&tag=2")
			.contentType(MediaType.APPLICATION_JSON)
			.header("Idempotency-Key", key)
			.bodyValue("{\"name\":\"order\"}")
			.exchange()
			.expectHeader()
			.valueEquals("Idempotent-Replayed", "true");
		assertThat(this.controller.runs("create")).isEqualTo(1);
	}

	@Test
	void aDuplicateOfARequestStillRunningIs409AfterTheWait() throws Exception {
		String key = TestKeys.newKey();
		CompletableFuture<Integer> first = CompletableFuture.supplyAsync(
				() -> post("/slow?millis=3000", key).exchange().expectBody().returnResult().getStatus().value());
		awaitRuns("slow", 1);
		post("/slow?millis=3000", key).exchange()
			.expectStatus()
			.isEqualTo(409)
			.expectHeader()
			.valueEquals("Retry-After", "1")
			.expectBody()
			.jsonPath("$.type")
			.isEqualTo(PROBLEM + "request-in-flight");
		assertThat(first.get()).isEqualTo(200);
		post("/slow?millis=3000", key).exchange()
			.expectStatus()
			.isOk()
			.expectHeader()
			.valueEquals("Idempotent-Replayed", "true");
		assertThat(this.controller.runs("slow")).isEqualTo(1);
	}

	@Test
	void aDuplicateThatWaitsLongEnoughGetsTheReplay() throws Exception {
		String key = TestKeys.newKey();
		CompletableFuture<Integer> first = CompletableFuture.supplyAsync(
				() -> post("/slow?millis=300", key).exchange().expectBody().returnResult().getStatus().value());
		awaitRuns("slow", 1);
		post("/slow?millis=300", key).exchange()
			.expectStatus()
			.isOk()
			.expectHeader()
			.valueEquals("Idempotent-Replayed", "true")
			.expectBody()
			.jsonPath("$.run")
			.isEqualTo(1);
		assertThat(first.get()).isEqualTo(200);
		assertThat(this.controller.runs("slow")).isEqualTo(1);
	}

	@ParameterizedTest
	@ValueSource(ints = { 500, 502, 503, 401, 403, 408, 425, 429 })
	void nonFinalStatusesAreReleasedSoARetryRunsAgain(int code) {
		String key = TestKeys.newKey();
		post("/status/" + code, key).exchange().expectStatus().isEqualTo(code);
		post("/status/" + code, key).exchange()
			.expectStatus()
			.isEqualTo(code)
			.expectHeader()
			.doesNotExist("Idempotent-Replayed")
			.expectBody()
			.jsonPath("$.run")
			.isEqualTo(2);
		assertThat(this.controller.runs("status-" + code)).isEqualTo(2);
	}

	@ParameterizedTest
	@ValueSource(ints = { 200, 201, 202, 204, 301, 400, 404, 409, 410, 422 })
	void finalStatusesAreStoredAndReplayed(int code) {
		String key = TestKeys.newKey();
		EntityExchangeResult<byte[]> first = post("/status/" + code, key).exchange()
			.expectStatus()
			.isEqualTo(code)
			.expectBody()
			.returnResult();
		EntityExchangeResult<byte[]> retry = post("/status/" + code, key).exchange()
			.expectStatus()
			.isEqualTo(code)
			.expectHeader()
			.valueEquals("Idempotent-Replayed", "true")
			.expectBody()
			.returnResult();
		assertThat(retry.getResponseBody()).isEqualTo(first.getResponseBody());
		assertThat(this.controller.runs("status-" + code)).isEqualTo(1);
	}

	@Test
	void aHandledExceptionWith500IsReleased() {
		String key = TestKeys.newKey();
		post("/handled-failure", key).exchange().expectStatus().isEqualTo(500);
		post("/handled-failure", key).exchange().expectStatus().isEqualTo(500);
		assertThat(this.controller.runs("handled-failure")).isEqualTo(2);
	}

	@Test
	void aBodyOverTheMaximumIsSentWholeButNotStored() {
		String key = TestKeys.newKey();
		post("/big?bytes=5000", key).exchange()
			.expectStatus()
			.isOk()
			.expectBody(String.class)
			.value((body) -> assertThat(body).hasSize(5000));
		post("/big?bytes=5000", key).exchange()
			.expectStatus()
			.isOk()
			.expectHeader()
			.doesNotExist("Idempotent-Replayed");
		assertThat(this.controller.runs("big")).isEqualTo(2);

		String small = TestKeys.newKey();
		post("/big?bytes=1000", small).exchange().expectStatus().isOk();
		post("/big?bytes=1000", small).exchange()
			.expectHeader()
			.valueEquals("Idempotent-Replayed", "true")
			.expectBody(String.class)
			.isEqualTo("x".repeat(1000));
		assertThat(this.controller.runs("big")).isEqualTo(3);
	}

	@Test
	void credentialsAreNeverStoredButAllowlistedHeadersAre() {
		String key = TestKeys.newKey();
		post("/cookie", key).exchange().expectHeader().valueEquals("Set-Cookie", "session=secret");
		post("/cookie", key).exchange()
			.expectHeader()
			.valueEquals("Idempotent-Replayed", "true")
			.expectHeader()
			.valueEquals("ETag", "\"v1\"")
			.expectHeader()
			.doesNotExist("Set-Cookie");
	}

	@Test
	void safeMethodsAreNeverProtected() {
		String key = TestKeys.newKey();
		client().get().uri("/things").header("Idempotency-Key", key).exchange().expectStatus().isOk();
		client().get()
			.uri("/things")
			.header("Idempotency-Key", key)
			.exchange()
			.expectStatus()
			.isOk()
			.expectHeader()
			.doesNotExist("Idempotent-Replayed");
		assertThat(this.controller.runs("list")).isEqualTo(2);
	}

	@Test
	void unannotatedHandlersAreUntouched() {
		String key = TestKeys.newKey();
		post("/unprotected", key).exchange().expectStatus().isOk();
		post("/unprotected", key).exchange().expectHeader().doesNotExist("Idempotent-Replayed");
		assertThat(this.controller.runs("unprotected")).isEqualTo(2);
	}

	@Test
	void configuredPathPatternsAreProtectedWithoutAnnotation() {
		String key = TestKeys.newKey();
		post("/pattern/open", key).exchange().expectStatus().isOk();
		post("/pattern/open", key).exchange().expectHeader().valueEquals("Idempotent-Replayed", "true");
		assertThat(this.controller.runs("pattern")).isEqualTo(1);
	}

	@Test
	void anotherPrincipalsKeyIsAnotherRecord() {
		String key = TestKeys.newKey();
		create(key, "h", "alice").exchange().expectBody().jsonPath("$.run").isEqualTo(1);
		create(key, "h", "bob").exchange()
			.expectHeader()
			.doesNotExist("Idempotent-Replayed")
			.expectBody()
			.jsonPath("$.run")
			.isEqualTo(2);
		create(key, "h", "alice").exchange()
			.expectHeader()
			.valueEquals("Idempotent-Replayed", "true")
			.expectBody()
			.jsonPath("$.run")
			.isEqualTo(1);
		create(key, "h").exchange()
			.expectHeader()
			.doesNotExist("Idempotent-Replayed")
			.expectBody()
			.jsonPath("$.run")
			.isEqualTo(3);
		assertThat(this.controller.runs("create")).isEqualTo(3);
	}

	private WebTestClient.RequestHeadersSpec<?> create(String key, String name, String user) {
		return client().post()
			.uri("/things")
			.contentType(MediaType.APPLICATION_JSON)
			.header("Idempotency-Key", key)
			.header(WebTestApplication.USER_HEADER, user)
			.bodyValue("{\"name\":\"" + name + "\"}");
	}

	@Test
	void whenTheStoreIsDownNothingRunsAnd503TellsWhenToRetry() {
		this.store.down = true;
		String key = TestKeys.newKey();
		create(key, "i").exchange()
			.expectStatus()
			.isEqualTo(503)
			.expectHeader()
			.valueEquals("Retry-After", "5")
			.expectHeader()
			.contentType("application/problem+json")
			.expectBody()
			.jsonPath("$.type")
			.isEqualTo(PROBLEM + "store-unavailable");
		assertThat(this.controller.runs("create")).isZero();
		this.store.down = false;
		create(key, "i").exchange().expectStatus().isCreated();
		create(key, "i").exchange().expectHeader().valueEquals("Idempotent-Replayed", "true");
		assertThat(this.controller.runs("create")).isEqualTo(1);
	}

	@Test
	void aMalformedBodyIsReleasedSoTheCorrectedRetryRuns() {
		String key = TestKeys.newKey();
		for (int i = 0; i < 2; i++) {
			client().post()
				.uri("/things")
				.contentType(MediaType.APPLICATION_JSON)
				.header("Idempotency-Key", key)
				.bodyValue("{broken")
				.exchange()
				.expectStatus()
				.isBadRequest()
				.expectHeader()
				.doesNotExist("Idempotent-Replayed");
		}
		assertThat(this.controller.runs("create")).isZero();
		create(key, "fixed").exchange().expectStatus().isCreated().expectHeader().doesNotExist("Idempotent-Replayed");
		assertThat(this.controller.runs("create")).isEqualTo(1);
	}

	void awaitRuns(String endpoint, int runs) throws InterruptedException {
		long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (this.controller.runs(endpoint) < runs) {
			assertThat(System.nanoTime()).as("waiting for " + endpoint + " to run").isLessThan(deadline);
			Thread.sleep(5);
		}
	}

}
