package dev.idempotency.web;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;

import dev.idempotency.test.TestKeys;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.MvcResult;
import org.springframework.test.web.servlet.request.MockHttpServletRequestBuilder;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * Every branch of the protocol table, through the HTTP front door, on a real Spring MVC
 * stack.
 */
@SpringBootTest(classes = WebTestApplication.class,
		properties = { "idempotency.web.path-patterns=/pattern/**", "idempotency.in-flight.wait=1s",
				"idempotency.response.max-body-size=1KB" })
@AutoConfigureMockMvc
class IdempotencyWebTests {

	private static final String PROBLEM = "https://idempotency.dev/problems/";

	@Autowired
	private MockMvc mvc;

	@Autowired
	private WebTestApplication.ThingController controller;

	@Autowired
	private WebTestApplication.SwitchableStore store;

	@AfterEach
	void storeUp() {
		this.store.down = false;
		this.controller.reset();
	}

	private static MockHttpServletRequestBuilder create(String key, String name) {
		MockHttpServletRequestBuilder request = post("/things").contentType(MediaType.APPLICATION_JSON)
			.content("{\"name\":\"" + name + "\"}");
		return (key != null) ? request.header("Idempotency-Key", key) : request;
	}

	@Test
	void aRetryReplaysTheStoredResponseByteExactWithoutRunningAgain() throws Exception {
		String key = TestKeys.newKey();
		MvcResult first = this.mvc.perform(create(key, "a"))
			.andExpect(status().isCreated())
			.andExpect(header().string("Location", "/things/a"))
			.andExpect(header().doesNotExist("Idempotent-Replayed"))
			.andReturn();
		MvcResult retry = this.mvc.perform(create(key, "a"))
			.andExpect(status().isCreated())
			.andExpect(header().string("Location", "/things/a"))
			.andExpect(header().string("Idempotent-Replayed", "true"))
			.andExpect(header().string("Content-Type", first.getResponse().getContentType()))
			.andExpect(header().doesNotExist("X-Run"))
			.andReturn();
		assertThat(retry.getResponse().getContentAsByteArray()).isEqualTo(first.getResponse().getContentAsByteArray());
		assertThat(this.controller.runs("create")).isEqualTo(1);
	}

	@Test
	void theQuotedAndUpperCaseFormsOfAKeyAreTheSameKey() throws Exception {
		String key = TestKeys.newKey();
		this.mvc.perform(create(key, "q")).andExpect(status().isCreated());
		this.mvc.perform(create("\"" + key.toUpperCase() + "\"", "q"))
			.andExpect(status().isCreated())
			.andExpect(header().string("Idempotent-Replayed", "true"));
		assertThat(this.controller.runs("create")).isEqualTo(1);
	}

	@Test
	void withoutAKeyTheRequestRunsUnprotected() throws Exception {
		this.mvc.perform(create(null, "b")).andExpect(status().isCreated());
		this.mvc.perform(create(null, "b")).andExpect(status().isCreated());
		assertThat(this.controller.runs("create")).isEqualTo(2);
	}

	@Test
	void aRequiredKeyThatIsMissingIs400() throws Exception {
		this.mvc.perform(post("/required"))
			.andExpect(status().isBadRequest())
			.andExpect(content().contentType("application/problem+json"))
			.andExpect(jsonPath("$.type").value(PROBLEM + "key-required"))
			.andExpect(jsonPath("$.status").value(400))
			.andExpect(jsonPath("$.detail").isNotEmpty());
		assertThat(this.controller.runs("required")).isZero();
	}

	@ParameterizedTest
	@ValueSource(strings = { "not-a-uuid", "4b1e0c1e-6b7a-4f0e-9c1d-2a3b4c5d6e7f", "", "\"unterminated" })
	void anInvalidKeyIs400AndNothingRuns(String key) throws Exception {
		this.mvc.perform(create(key, "c"))
			.andExpect(status().isBadRequest())
			.andExpect(content().contentType("application/problem+json"))
			.andExpect(jsonPath("$.type").value(PROBLEM + "invalid-key"))
			.andExpect(jsonPath("$.detail").isNotEmpty());
		assertThat(this.controller.runs("create")).isZero();
	}

	@Test
	void twoKeyHeadersAre400() throws Exception {
		this.mvc.perform(create(TestKeys.newKey(), "d").header("Idempotency-Key", TestKeys.newKey()))
			.andExpect(status().isBadRequest())
			.andExpect(jsonPath("$.type").value(PROBLEM + "invalid-key"))
			.andExpect(jsonPath("$.detail").value(org.hamcrest.Matchers.containsString("exactly one")));
		assertThat(this.controller.runs("create")).isZero();
	}

	@Test
	void keysOutsideTheirTimeWindowAre400() throws Exception {
		String old = TestKeys.at(Instant.now().minus(Duration.ofMinutes(36)));
		this.mvc.perform(create(old, "e"))
			.andExpect(status().isBadRequest())
			.andExpect(jsonPath("$.detail").value(org.hamcrest.Matchers.containsString("older than")));
		String future = TestKeys.at(Instant.now().plus(Duration.ofMinutes(5)));
		this.mvc.perform(create(future, "e"))
			.andExpect(status().isBadRequest())
			.andExpect(jsonPath("$.detail").value(org.hamcrest.Matchers.containsString("in the future")));
		assertThat(this.controller.runs("create")).isZero();
	}

	@Test
	void theSameKeyWithAnotherBodyIs422AndChangesNothing() throws Exception {
		String key = TestKeys.newKey();
		this.mvc.perform(create(key, "f")).andExpect(status().isCreated());
		this.mvc.perform(create(key, "other"))
			.andExpect(status().isUnprocessableContent())
			.andExpect(content().contentType("application/problem+json"))
			.andExpect(jsonPath("$.type").value(PROBLEM + "key-reused"))
			.andExpect(jsonPath("$.status").value(422));
		this.mvc.perform(create(key, "f"))
			.andExpect(status().isCreated())
			.andExpect(jsonPath("$.name").value("f"))
			.andExpect(header().string("Idempotent-Replayed", "true"));
		assertThat(this.controller.runs("create")).isEqualTo(1);
	}

	@Test
	void theSameKeyOnAnotherPathIs422() throws Exception {
		String key = TestKeys.newKey();
		this.mvc.perform(create(key, "g")).andExpect(status().isCreated());
		this.mvc.perform(post("/cookie").header("Idempotency-Key", key))
			.andExpect(status().isUnprocessableContent())
			.andExpect(jsonPath("$.type").value(PROBLEM + "key-reused"));
		assertThat(this.controller.runs("cookie")).isZero();
	}

	@Test
	void theOrderOfRepeatedQueryValuesIsPartOfTheRequest() throws Exception {
		String key = TestKeys.newKey();
		this.mvc.perform(create(key, "order").queryParam("tag", "1", "2")).andExpect(status().isCreated());
		this.mvc.perform(create(key, "order").queryParam("tag", "2", "1"))
			.andExpect(status().isUnprocessableContent())
			.andExpect(jsonPath("$.type").value(PROBLEM + "key-reused"));
		this.mvc.perform(create(key, "order").queryParam("tag", "1", "2"))
			.andExpect(header().string("Idempotent-Replayed", "true"));
		assertThat(this.controller.runs("create")).isEqualTo(1);
	}

	@Test
	void aDuplicateOfARequestStillRunningIs409AfterTheWait() throws Exception {
		String key = TestKeys.newKey();
		CompletableFuture<MvcResult> first = CompletableFuture
			.supplyAsync(() -> perform(post("/slow").param("millis", "3000").header("Idempotency-Key", key)));
		awaitRuns("slow", 1);
		this.mvc.perform(post("/slow").param("millis", "3000").header("Idempotency-Key", key))
			.andExpect(status().isConflict())
			.andExpect(header().string("Retry-After", "1"))
			.andExpect(jsonPath("$.type").value(PROBLEM + "request-in-flight"));
		assertThat(first.get().getResponse().getStatus()).isEqualTo(200);
		this.mvc.perform(post("/slow").param("millis", "3000").header("Idempotency-Key", key))
			.andExpect(status().isOk())
			.andExpect(header().string("Idempotent-Replayed", "true"));
		assertThat(this.controller.runs("slow")).isEqualTo(1);
	}

	@Test
	void aDuplicateThatWaitsLongEnoughGetsTheReplay() throws Exception {
		String key = TestKeys.newKey();
		CompletableFuture<MvcResult> first = CompletableFuture
			.supplyAsync(() -> perform(post("/slow").param("millis", "300").header("Idempotency-Key", key)));
		awaitRuns("slow", 1);
		this.mvc.perform(post("/slow").param("millis", "300").header("Idempotency-Key", key))
			.andExpect(status().isOk())
			.andExpect(header().string("Idempotent-Replayed", "true"))
			.andExpect(jsonPath("$.run").value(1));
		assertThat(first.get().getResponse().getStatus()).isEqualTo(200);
		assertThat(this.controller.runs("slow")).isEqualTo(1);
	}

	@ParameterizedTest
	@ValueSource(ints = { 500, 502, 503, 401, 403, 408, 425, 429 })
	void nonFinalStatusesAreReleasedSoARetryRunsAgain(int code) throws Exception {
		String key = TestKeys.newKey();
		this.mvc.perform(post("/status/" + code).header("Idempotency-Key", key)).andExpect(status().is(code));
		this.mvc.perform(post("/status/" + code).header("Idempotency-Key", key))
			.andExpect(status().is(code))
			.andExpect(header().doesNotExist("Idempotent-Replayed"))
			.andExpect(jsonPath("$.run").value(2));
		assertThat(this.controller.runs("status-" + code)).isEqualTo(2);
	}

	@ParameterizedTest
	@ValueSource(ints = { 200, 201, 202, 204, 301, 400, 404, 409, 410, 422 })
	void finalStatusesAreStoredAndReplayed(int code) throws Exception {
		String key = TestKeys.newKey();
		MvcResult first = this.mvc.perform(post("/status/" + code).header("Idempotency-Key", key))
			.andExpect(status().is(code))
			.andReturn();
		MvcResult retry = this.mvc.perform(post("/status/" + code).header("Idempotency-Key", key))
			.andExpect(status().is(code))
			.andExpect(header().string("Idempotent-Replayed", "true"))
			.andReturn();
		assertThat(retry.getResponse().getContentAsByteArray()).isEqualTo(first.getResponse().getContentAsByteArray());
		assertThat(this.controller.runs("status-" + code)).isEqualTo(1);
	}

	@Test
	void anAnswerTheApplicationMarksNotStoredIsSentAndItsRetryRunsAgain() throws Exception {
		String key = TestKeys.newKey();
		for (int run = 1; run <= 2; run++) {
			this.mvc.perform(post("/not-stored").header("Idempotency-Key", key))
				.andExpect(status().isOk())
				.andExpect(jsonPath("$.run").value(run))
				.andExpect(header().doesNotExist("Idempotent-Replayed"));
		}
		assertThat(this.controller.runs("not-stored")).isEqualTo(2);
	}

	@Test
	void aHandledExceptionWith500IsReleased() throws Exception {
		String key = TestKeys.newKey();
		this.mvc.perform(post("/handled-failure").header("Idempotency-Key", key))
			.andExpect(status().isInternalServerError());
		this.mvc.perform(post("/handled-failure").header("Idempotency-Key", key))
			.andExpect(status().isInternalServerError());
		assertThat(this.controller.runs("handled-failure")).isEqualTo(2);
	}

	@Test
	void anUnhandledExceptionIsReleased() throws Exception {
		String key = TestKeys.newKey();
		for (int i = 0; i < 2; i++) {
			assertThatExceptionOfType(Exception.class)
				.isThrownBy(() -> this.mvc.perform(post("/throw").header("Idempotency-Key", key)))
				.withRootCauseInstanceOf(IllegalStateException.class);
		}
		assertThat(this.controller.runs("throw")).isEqualTo(2);
	}

	@Test
	void aBodyOverTheMaximumIsSentWholeButNotStored() throws Exception {
		String key = TestKeys.newKey();
		MvcResult big = this.mvc.perform(post("/big").param("bytes", "5000").header("Idempotency-Key", key))
			.andExpect(status().isOk())
			.andReturn();
		assertThat(big.getResponse().getContentAsString()).hasSize(5000);
		this.mvc.perform(post("/big").param("bytes", "5000").header("Idempotency-Key", key))
			.andExpect(status().isOk())
			.andExpect(header().doesNotExist("Idempotent-Replayed"));
		assertThat(this.controller.runs("big")).isEqualTo(2);

		String small = TestKeys.newKey();
		this.mvc.perform(post("/big").param("bytes", "1000").header("Idempotency-Key", small));
		this.mvc.perform(post("/big").param("bytes", "1000").header("Idempotency-Key", small))
			.andExpect(header().string("Idempotent-Replayed", "true"))
			.andExpect(content().string("x".repeat(1000)));
		assertThat(this.controller.runs("big")).isEqualTo(3);
	}

	@Test
	void credentialsAreNeverStoredButAllowlistedHeadersAre() throws Exception {
		String key = TestKeys.newKey();
		this.mvc.perform(post("/cookie").header("Idempotency-Key", key))
			.andExpect(header().string("Set-Cookie", "session=secret"));
		this.mvc.perform(post("/cookie").header("Idempotency-Key", key))
			.andExpect(header().string("Idempotent-Replayed", "true"))
			.andExpect(header().string("ETag", "\"v1\""))
			.andExpect(header().doesNotExist("Set-Cookie"));
	}

	@Test
	void safeMethodsAreNeverProtected() throws Exception {
		String key = TestKeys.newKey();
		this.mvc.perform(get("/things").header("Idempotency-Key", key)).andExpect(status().isOk());
		this.mvc.perform(get("/things").header("Idempotency-Key", key))
			.andExpect(status().isOk())
			.andExpect(header().doesNotExist("Idempotent-Replayed"));
		assertThat(this.controller.runs("list")).isEqualTo(2);
	}

	@Test
	void unannotatedHandlersAreUntouched() throws Exception {
		String key = TestKeys.newKey();
		this.mvc.perform(post("/unprotected").header("Idempotency-Key", key)).andExpect(status().isOk());
		this.mvc.perform(post("/unprotected").header("Idempotency-Key", key))
			.andExpect(header().doesNotExist("Idempotent-Replayed"));
		assertThat(this.controller.runs("unprotected")).isEqualTo(2);
	}

	@Test
	void configuredPathPatternsAreProtectedWithoutAnnotation() throws Exception {
		String key = TestKeys.newKey();
		this.mvc.perform(post("/pattern/open").header("Idempotency-Key", key)).andExpect(status().isOk());
		this.mvc.perform(post("/pattern/open").header("Idempotency-Key", key))
			.andExpect(header().string("Idempotent-Replayed", "true"));
		assertThat(this.controller.runs("pattern")).isEqualTo(1);
	}

	@Test
	void anotherPrincipalsKeyIsAnotherRecord() throws Exception {
		String key = TestKeys.newKey();
		this.mvc.perform(create(key, "h").principal(() -> "alice")).andExpect(jsonPath("$.run").value(1));
		this.mvc.perform(create(key, "h").principal(() -> "bob"))
			.andExpect(header().doesNotExist("Idempotent-Replayed"))
			.andExpect(jsonPath("$.run").value(2));
		this.mvc.perform(create(key, "h").principal(() -> "alice"))
			.andExpect(header().string("Idempotent-Replayed", "true"))
			.andExpect(jsonPath("$.run").value(1));
		this.mvc.perform(create(key, "h"))
			.andExpect(header().doesNotExist("Idempotent-Replayed"))
			.andExpect(jsonPath("$.run").value(3));
		assertThat(this.controller.runs("create")).isEqualTo(3);
	}

	@Test
	void whenTheStoreIsDownNothingRunsAnd503TellsWhenToRetry() throws Exception {
		this.store.down = true;
		String key = TestKeys.newKey();
		this.mvc.perform(create(key, "i"))
			.andExpect(status().isServiceUnavailable())
			.andExpect(header().string("Retry-After", "5"))
			.andExpect(content().contentType("application/problem+json"))
			.andExpect(jsonPath("$.type").value(PROBLEM + "store-unavailable"));
		assertThat(this.controller.runs("create")).isZero();
		this.store.down = false;
		this.mvc.perform(create(key, "i")).andExpect(status().isCreated());
		this.mvc.perform(create(key, "i")).andExpect(header().string("Idempotent-Replayed", "true"));
		assertThat(this.controller.runs("create")).isEqualTo(1);
	}

	@Test
	void aMalformedBodyIsReleasedSoTheCorrectedRetryRuns() throws Exception {
		String key = TestKeys.newKey();
		this.mvc
			.perform(post("/things").contentType(MediaType.APPLICATION_JSON)
				.content("{broken")
				.header("Idempotency-Key", key))
			.andExpect(status().isBadRequest());
		assertThat(this.controller.runs("create")).isZero();
		// The 400 came from the container's error handling, outside the request: not
		// stored.
		this.mvc
			.perform(post("/things").contentType(MediaType.APPLICATION_JSON)
				.content("{broken")
				.header("Idempotency-Key", key))
			.andExpect(status().isBadRequest())
			.andExpect(header().doesNotExist("Idempotent-Replayed"));
	}

	private void awaitRuns(String endpoint, int runs) throws InterruptedException {
		long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (this.controller.runs(endpoint) < runs) {
			assertThat(System.nanoTime()).as("waiting for " + endpoint + " to run").isLessThan(deadline);
			Thread.sleep(5);
		}
	}

	private MvcResult perform(MockHttpServletRequestBuilder request) {
		try {
			return this.mvc.perform(request).andReturn();
		}
		catch (Exception ex) {
			throw new IllegalStateException(ex);
		}
	}

}
