package dev.idempotency.web;

import dev.idempotency.test.TestKeys;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The WebFlux suite against functional routes ({@link FunctionalRoutesTestApplication}),
 * protected by {@link IdempotencyHandlerFilterFunction} added to them: the same answers
 * as for annotated handlers.
 */
@SpringBootTest(classes = FunctionalRoutesTestApplication.class,
		webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { AbstractIdempotencyWebTests.PROPERTIES_PATTERN, AbstractIdempotencyWebTests.PROPERTIES_WAIT,
				AbstractIdempotencyWebTests.PROPERTIES_MAX_BODY, "spring.main.web-application-type=reactive" })
class FunctionalRoutesIdempotencyWebTests extends AbstractWebFluxIdempotencyWebTests {

	/**
	 * A filtered route that {@code idempotency.web.path-patterns} also matches is
	 * protected once (by the path pattern): protected twice, the filter would find the
	 * web filter's own reservation in flight and answer the first request {@code 409}.
	 */
	@Test
	void aFilteredRouteUnderAPathPatternIsProtectedOnce() {
		String key = TestKeys.newKey();
		client().post()
			.uri("/pattern/filtered")
			.header("Idempotency-Key", key)
			.exchange()
			.expectStatus()
			.isOk()
			.expectHeader()
			.doesNotExist("Idempotent-Replayed")
			.expectBody()
			.jsonPath("$.run")
			.isEqualTo(1);
		client().post()
			.uri("/pattern/filtered")
			.header("Idempotency-Key", key)
			.exchange()
			.expectStatus()
			.isOk()
			.expectHeader()
			.valueEquals("Idempotent-Replayed", "true")
			.expectBody()
			.jsonPath("$.run")
			.isEqualTo(1);
		assertThat(this.controller.runs("pattern-filtered")).isEqualTo(1);
	}

	/**
	 * An error handler added after the filter runs inside it: its answer is the route's
	 * answer, stored and replayed as any other.
	 */
	@Test
	void anErrorHandlersAnswerAfterTheFilterIsStoredAndReplayed() {
		String key = TestKeys.newKey();
		client().post()
			.uri("/conflict")
			.header("Idempotency-Key", key)
			.exchange()
			.expectStatus()
			.isEqualTo(409)
			.expectHeader()
			.doesNotExist("Idempotent-Replayed");
		client().post()
			.uri("/conflict")
			.header("Idempotency-Key", key)
			.exchange()
			.expectStatus()
			.isEqualTo(409)
			.expectHeader()
			.valueEquals("Idempotent-Replayed", "true")
			.expectBody()
			.jsonPath("$.error")
			.isEqualTo("taken");
		assertThat(this.controller.runs("conflict")).isEqualTo(1);
	}

}
