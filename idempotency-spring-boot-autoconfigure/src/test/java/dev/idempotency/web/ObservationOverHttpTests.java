package dev.idempotency.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import dev.idempotency.Idempotent;
import dev.idempotency.test.TestKeys;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.tracing.test.simple.SimpleSpan;
import io.micrometer.tracing.test.simple.SimpleTracer;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * With Actuator's metrics and a tracing bridge, as an application has them: each keyed
 * request is one {@code idempotency.request} observation, which is a timer in
 * {@code /actuator/metrics} tagged by outcome, door, model and store (never the key), and
 * a span in the request's own trace, a replay included, and the parent of the handler's
 * own spans; a handler that throws is observed with its error.
 */
@SpringBootTest(classes = { HttpDoorTestApplication.class, ObservationOverHttpTests.Tracing.class },
		webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = "management.endpoints.web.exposure.include=metrics")
class ObservationOverHttpTests {

	private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	private final ObjectMapper json = new ObjectMapper();

	@LocalServerPort
	private int port;

	@Autowired
	private SimpleTracer tracer;

	@Test
	void theTimerIsInActuatorMetricsWithItsTagsAndWithoutTheKey() throws Exception {
		String key = TestKeys.newKey();
		assertThat(post("/echo", key).statusCode()).isEqualTo(200);
		assertThat(post("/echo", key).headers().firstValue("Idempotent-Replayed")).hasValue("true");
		HttpResponse<String> metric = get("/actuator/metrics/idempotency.request");
		assertThat(metric.statusCode()).as(metric.body()).isEqualTo(200);
		Map<String, List<String>> tags = availableTags(this.json.readTree(metric.body()));
		assertThat(tags.get("idempotency.outcome")).contains("executed", "replayed");
		assertThat(tags.get("idempotency.door")).containsExactly("http");
		assertThat(tags.get("idempotency.model")).containsExactly("lease");
		assertThat(tags.get("idempotency.store")).containsExactly("memory");
		assertThat(metric.body()).doesNotContain(key);
		HttpResponse<String> replays = get(
				"/actuator/metrics/idempotency.request?tag=idempotency.outcome:replayed&tag=idempotency.door:http");
		assertThat(replays.statusCode()).as(replays.body()).isEqualTo(200);
		assertThat(count(this.json.readTree(replays.body()))).isGreaterThanOrEqualTo(1.0);
		assertThat(get("/actuator/metrics/idempotency.request.active").statusCode()).isEqualTo(200);
		assertThat(get("/actuator/metrics/idempotency.requests").statusCode()).as("the engine's counter is still there")
			.isEqualTo(200);
	}

	@Test
	void aReplayIsASpanInTheRequestsTrace() throws Exception {
		String key = TestKeys.newKey();
		assertThat(post("/echo", key).statusCode()).isEqualTo(200);
		this.tracer.getSpans().clear();
		assertThat(post("/echo", key).headers().firstValue("Idempotent-Replayed")).hasValue("true");
		SimpleSpan replay = this.tracer.getSpans()
			.stream()
			.filter((span) -> "idempotency.request".equals(span.getName()))
			.findFirst()
			.orElseThrow(() -> new AssertionError("no idempotency.request span in " + this.tracer.getSpans()));
		assertThat(replay.getTags()).containsEntry("idempotency.outcome", "replayed")
			.containsEntry("idempotency.door", "http");
		assertThat(replay.getTags().values()).doesNotContain(key);
		SimpleSpan server = serverSpan(this.tracer);
		assertThat(replay.getTraceId()).isEqualTo(server.getTraceId());
		assertThat(replay.getParentId()).as("a child of the request's server span").isEqualTo(server.getSpanId());
	}

	@Test
	void theHandlersOwnSpansAreChildrenOfTheCallsSpan() throws Exception {
		this.tracer.getSpans().clear();
		assertThat(post("/observed/work", TestKeys.newKey()).statusCode()).isEqualTo(200);
		SimpleSpan call = span("idempotency.request");
		assertThat(call.getTags()).containsEntry("idempotency.outcome", "executed");
		assertThat(span("handler.work").getParentId()).as("a child of the call's span").isEqualTo(call.getSpanId());
	}

	@Test
	void aHandlerThatThrowsIsObservedWithItsError() throws Exception {
		this.tracer.getSpans().clear();
		assertThat(post("/observed/failing", TestKeys.newKey()).statusCode()).isEqualTo(500);
		SimpleSpan call = span("idempotency.request");
		assertThat(call.getTags()).containsEntry("idempotency.outcome", "executed");
		assertThat(call.getError()).isInstanceOf(IllegalStateException.class).hasMessage("the handler failed");
		HttpResponse<String> failed = get(
				"/actuator/metrics/idempotency.request?tag=idempotency.outcome:executed&tag=error:IllegalStateException");
		assertThat(failed.statusCode()).as(failed.body()).isEqualTo(200);
		assertThat(count(this.json.readTree(failed.body()))).isGreaterThanOrEqualTo(1.0);

		// An asynchronous handler whose Callable throws, answered in a later dispatch.
		this.tracer.getSpans().clear();
		HttpRequest later = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/async/failing"))
			.header("Idempotency-Key", TestKeys.newKey())
			.header("X-Gate", "observed-failing")
			.POST(HttpRequest.BodyPublishers.noBody())
			.build();
		assertThat(this.http.send(later, HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(500);
		SimpleSpan asynchronous = Awaitility.await()
			.atMost(Duration.ofSeconds(10))
			.until(() -> span("idempotency.request"),
					(span) -> span.getEndTimestamp() != null && span.getEndTimestamp().toEpochMilli() > 0);
		assertThat(asynchronous.getError()).isInstanceOf(IllegalStateException.class)
			.hasMessage("the asynchronous part failed");
	}

	private SimpleSpan span(String name) {
		return span(this.tracer, name);
	}

	/**
	 * The first span of that name the tracer holds (also for the WebFlux door's test).
	 */
	static SimpleSpan span(SimpleTracer tracer, String name) {
		return tracer.getSpans()
			.stream()
			.filter((span) -> name.equals(span.getName()))
			.findFirst()
			.orElseThrow(() -> new AssertionError("no " + name + " span in " + tracer.getSpans()));
	}

	/**
	 * The request's server span. The server's observation stops, and names its span,
	 * after the response went out: the client can read the answer before that.
	 */
	static SimpleSpan serverSpan(SimpleTracer tracer) {
		return Awaitility.await()
			.atMost(Duration.ofSeconds(10))
			.until(() -> tracer.getSpans()
				.stream()
				.filter((span) -> span.getName() != null && span.getName().startsWith("http post"))
				.findFirst(), Optional::isPresent)
			.orElseThrow();
	}

	private static Map<String, List<String>> availableTags(JsonNode metric) {
		Map<String, List<String>> tags = new java.util.TreeMap<>();
		for (JsonNode tag : metric.get("availableTags")) {
			List<String> values = new java.util.ArrayList<>();
			tag.get("values").forEach((value) -> values.add(value.asString()));
			tags.put(tag.get("tag").asString(), values);
		}
		return tags;
	}

	private static double count(JsonNode metric) {
		for (JsonNode measurement : metric.get("measurements")) {
			if ("COUNT".equals(measurement.get("statistic").asString())) {
				return measurement.get("value").asDouble();
			}
		}
		return 0;
	}

	private HttpResponse<String> get(String path) throws Exception {
		return this.http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path)).build(),
				HttpResponse.BodyHandlers.ofString());
	}

	private HttpResponse<String> post(String path, String key) throws Exception {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + path))
			.header("Idempotency-Key", key)
			.header("Content-Type", "text/plain")
			.POST(HttpRequest.BodyPublishers.ofString("hello"))
			.build();
		return this.http.send(request, HttpResponse.BodyHandlers.ofString());
	}

	@Configuration(proxyBeanMethods = false)
	static class Tracing {

		@Bean
		SimpleTracer simpleTracer() {
			return new SimpleTracer();
		}

		@RestController
		static class ObservedController {

			private final ObservationRegistry registry;

			ObservedController(ObservationRegistry registry) {
				this.registry = registry;
			}

			/** Does its work in an observation of its own, as instrumented code does. */
			@PostMapping("/observed/work")
			@Idempotent
			String work() {
				return Observation.createNotStarted("handler.work", this.registry).observe(() -> "done");
			}

			@PostMapping("/observed/failing")
			@Idempotent
			String failing() {
				throw new IllegalStateException("the handler failed");
			}

		}

	}

}
