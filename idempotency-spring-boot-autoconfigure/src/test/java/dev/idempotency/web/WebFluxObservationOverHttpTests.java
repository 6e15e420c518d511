package dev.idempotency.web;

import java.time.Duration;

import dev.idempotency.Idempotent;
import dev.idempotency.test.TestKeys;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.contextpropagation.ObservationThreadLocalAccessor;
import io.micrometer.tracing.test.simple.SimpleSpan;
import io.micrometer.tracing.test.simple.SimpleTracer;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The WebFlux door's {@code idempotency.request} observation with a tracing bridge, as on
 * Spring MVC ({@link ObservationOverHttpTests}): a span in the request's own trace, a
 * replay included, the parent of the spans the handler makes (through the Reactor
 * context, where WebFlux keeps observations), and carrying a failing handler's error.
 */
@SpringBootTest(classes = WebFluxObservationOverHttpTests.App.class,
		webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = "spring.main.web-application-type=reactive")
class WebFluxObservationOverHttpTests {

	@LocalServerPort
	private int port;

	@Autowired
	private SimpleTracer tracer;

	@Test
	void aReplayIsASpanInTheRequestsTrace() {
		String key = TestKeys.newKey();
		post("/observed/work", key).expectStatus().isOk();
		this.tracer.getSpans().clear();
		post("/observed/work", key).expectHeader().valueEquals("Idempotent-Replayed", "true");
		SimpleSpan replay = span("idempotency.request");
		assertThat(replay.getTags()).containsEntry("idempotency.outcome", "replayed")
			.containsEntry("idempotency.door", "http");
		SimpleSpan server = ObservationOverHttpTests.serverSpan(this.tracer);
		assertThat(replay.getTraceId()).isEqualTo(server.getTraceId());
		assertThat(replay.getParentId()).as("a child of the request's server span").isEqualTo(server.getSpanId());
	}

	@Test
	void theHandlersOwnSpansAreChildrenOfTheCallsSpan() {
		this.tracer.getSpans().clear();
		post("/observed/work", TestKeys.newKey()).expectStatus().isOk();
		SimpleSpan call = span("idempotency.request");
		assertThat(call.getTags()).containsEntry("idempotency.outcome", "executed");
		assertThat(span("handler.work").getParentId()).as("a child of the call's span").isEqualTo(call.getSpanId());
	}

	@Test
	void aHandlerThatFailsIsObservedWithItsError() {
		this.tracer.getSpans().clear();
		post("/observed/failing", TestKeys.newKey()).expectStatus().isEqualTo(500);
		SimpleSpan call = Awaitility.await()
			.atMost(Duration.ofSeconds(10))
			.until(() -> span("idempotency.request"), (span) -> span.getError() != null);
		assertThat(call.getError()).isInstanceOf(IllegalStateException.class).hasMessage("the handler failed");
	}

	/**
	 * The method door's call, subscribed in a WebFlux handler, is in the request's trace:
	 * a child of the request's server span (of the HTTP door's call when the request is
	 * protected too). Before, its span began a trace of its own.
	 */
	@Test
	void aMethodDoorCallInAHandlerIsInTheRequestsTrace() {
		this.tracer.getSpans().clear();
		WebTestClient.bindToServer()
			.baseUrl("http://127.0.0.1:" + this.port)
			.build()
			.post()
			.uri("/observed/nested/" + TestKeys.newKey())
			.exchange()
			.expectStatus()
			.isOk();
		SimpleSpan call = span("idempotency.request");
		assertThat(call.getTags()).containsEntry("idempotency.door", "method");
		SimpleSpan server = ObservationOverHttpTests.serverSpan(this.tracer);
		assertThat(call.getTraceId()).isEqualTo(server.getTraceId());
		assertThat(call.getParentId()).as("a child of the request's server span").isEqualTo(server.getSpanId());
	}

	private SimpleSpan span(String name) {
		return ObservationOverHttpTests.span(this.tracer, name);
	}

	private WebTestClient.ResponseSpec post(String path, String key) {
		return WebTestClient.bindToServer()
			.baseUrl("http://127.0.0.1:" + this.port)
			.build()
			.post()
			.uri(path)
			.header("Idempotency-Key", key)
			.exchange();
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration(
			excludeName = "org.springframework.boot.liquibase.autoconfigure.LiquibaseAutoConfiguration")
	@Import({ ObservedController.class, NestingController.class, Charges.class })
	static class App {

		@Bean
		SimpleTracer simpleTracer() {
			return new SimpleTracer();
		}

	}

	@RestController
	static class ObservedController {

		private final ObservationRegistry registry;

		ObservedController(ObservationRegistry registry) {
			this.registry = registry;
		}

		/**
		 * Does its work in an observation of its own, its parent from the Reactor
		 * context.
		 */
		@PostMapping("/observed/work")
		@Idempotent
		Mono<String> work() {
			return Mono
				.deferContextual((context) -> Mono.just(Observation.createNotStarted("handler.work", this.registry)
					.parentObservation(context.getOrDefault(ObservationThreadLocalAccessor.KEY, null))
					.observe(() -> "done")));
		}

		@PostMapping("/observed/failing")
		@Idempotent
		Mono<String> failing() {
			return Mono.error(new IllegalStateException("the handler failed"));
		}

	}

	@RestController
	static class NestingController {

		private final Charges charges;

		NestingController(Charges charges) {
			this.charges = charges;
		}

		/** Not protected itself: calls the method door. */
		@PostMapping("/observed/nested/{id}")
		Mono<String> nested(@org.springframework.web.bind.annotation.PathVariable String id) {
			return this.charges.charge(id);
		}

	}

	static class Charges {

		@Idempotent(key = "#id")
		public Mono<String> charge(String id) {
			return Mono.just("charged " + id);
		}

	}

}
