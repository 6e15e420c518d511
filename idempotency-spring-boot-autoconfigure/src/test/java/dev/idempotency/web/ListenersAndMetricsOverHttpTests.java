package dev.idempotency.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.idempotency.autoconfigure.MicrometerIdempotencyListener;
import dev.idempotency.core.IdempotencyListener;
import dev.idempotency.core.IdempotencyOutcome;
import dev.idempotency.test.TestKeys;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.RouterFunctions;
import org.springframework.web.servlet.function.ServerResponse;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The metrics and the application's own listener over real HTTP: both hear every keyed
 * request, and a path matched by {@code idempotency.web.path-patterns} without a handler
 * method is tagged with its route's pattern, not with each URI.
 */
@SpringBootTest(classes = { HttpDoorTestApplication.class, ListenersAndMetricsOverHttpTests.Extras.class },
		webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = "idempotency.web.path-patterns=/items/**")
class ListenersAndMetricsOverHttpTests {

	private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	@LocalServerPort
	private int port;

	@Autowired
	private MeterRegistry registry;

	@Autowired
	private Extras extras;

	@Test
	void aKeyedRequestIsHeardByTheApplicationsListenerAndCountedByTheMetrics() throws Exception {
		String key = TestKeys.newKey();
		HttpResponse<String> first = post("/echo", key);
		HttpResponse<String> retry = post("/echo", key);
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(this.extras.heard).contains("executed " + operationOf("/echo"), "replayed " + operationOf("/echo"));
		assertThat(count("executed", operationOf("/echo"))).isGreaterThanOrEqualTo(1.0);
		assertThat(count("replayed", operationOf("/echo"))).isGreaterThanOrEqualTo(1.0);
	}

	@Test
	void aThousandDistinctUrisOfOneRouteGiveOneOperationTag() throws Exception {
		for (int i = 0; i < 1_000; i++) {
			HttpResponse<String> response = post("/items/" + i, TestKeys.newKey());
			assertThat(response.statusCode()).as(response.body()).isEqualTo(201);
		}
		Set<String> operations = new TreeSet<>();
		double executed = 0;
		for (Counter counter : this.registry.find(MicrometerIdempotencyListener.METER_NAME).counters()) {
			String operation = counter.getId().getTag("operation");
			if (operation != null && operation.contains("/items")) {
				operations.add(operation);
				if ("executed".equals(counter.getId().getTag("outcome"))) {
					executed += counter.count();
				}
			}
		}
		assertThat(operations).containsExactly("POST /items/{id}");
		assertThat(executed).isEqualTo(1_000.0);
	}

	/** The operation the door names for an annotated handler: bean type and method. */
	private static String operationOf(String path) {
		return "GatedController." + path.substring(1);
	}

	private double count(String outcome, String operation) {
		Counter counter = this.registry.find(MicrometerIdempotencyListener.METER_NAME)
			.tag("outcome", outcome)
			.tag("operation", operation)
			.counter();
		return (counter != null) ? counter.count() : 0;
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
	static class Extras {

		final List<String> heard = new CopyOnWriteArrayList<>();

		@Bean
		SimpleMeterRegistry meterRegistry() {
			return new SimpleMeterRegistry();
		}

		@Bean
		IdempotencyListener auditListener() {
			return (IdempotencyOutcome outcome, String operation) -> this.heard
				.add(outcome.name().toLowerCase(Locale.ROOT) + " " + operation);
		}

		/** A functional route: no handler method, only a matched pattern. */
		@Bean
		RouterFunction<ServerResponse> items() {
			return RouterFunctions.route()
				.POST("/items/{id}", (request) -> ServerResponse.status(201).body("item " + request.pathVariable("id")))
				.build();
		}

	}

}
