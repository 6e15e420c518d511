package dev.idempotency.method;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import dev.idempotency.Idempotent;
import dev.idempotency.test.TestKeys;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The two doors on one request. Both choose by the same annotation, the HTTP door the
 * handlers without a key expression and the method door those with one, so they never
 * protect the same call, not even when another bean, whose class annotation has a key
 * expression, inherits the handler method and is called during the request. (The method
 * door once skipped any call of the request's handler {@link java.lang.reflect.Method}:
 * unreachable for the handler itself, and such an inheriting bean ran unprotected.)
 */
@SpringBootTest(classes = HandledMethodOverHttpTests.App.class,
		webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class HandledMethodOverHttpTests {

	private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	@LocalServerPort
	private int port;

	@Autowired
	private Runs runs;

	@Test
	void aHandlerWithoutKeyExpressionIsProtectedByTheHttpDoorAlone() {
		String key = TestKeys.newKey();
		HttpResponse<String> first = post("/stamps?id=a", key);
		HttpResponse<String> retry = post("/stamps?id=a", key);
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
		assertThat(this.runs.of("handler-a")).isEqualTo(1);
	}

	@Test
	void anotherBeanInheritingTheHandledMethodIsProtectedByItsKeyExpressionInThatRequest() {
		// Two requests (two header keys) whose handler calls the keyed bean with the same
		// id: the keyed bean's call is protected by its own key expression, so the second
		// request's call replays the first's result.
		assertThat(post("/stamps?id=b", TestKeys.newKey()).statusCode()).isEqualTo(200);
		assertThat(post("/stamps?id=b", TestKeys.newKey()).statusCode()).isEqualTo(200);
		assertThat(this.runs.of("handler-b")).isEqualTo(2);
		assertThat(this.runs.of("keyed-b")).isEqualTo(1);
	}

	private HttpResponse<String> post(String path, String key) {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + path))
			.timeout(Duration.ofSeconds(30))
			.header("Idempotency-Key", key)
			.POST(HttpRequest.BodyPublishers.noBody())
			.build();
		try {
			return CLIENT.send(request, HttpResponse.BodyHandlers.ofString());
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration(
			excludeName = "org.springframework.boot.liquibase.autoconfigure.LiquibaseAutoConfiguration")
	static class App {

		@Bean
		Runs runs() {
			return new Runs();
		}

		@Bean
		KeyedStamps keyedStamps(Runs runs) {
			return new KeyedStamps(runs);
		}

		@Bean
		StampController stampController(Runs runs, KeyedStamps keyedStamps) {
			return new StampController(runs, keyedStamps);
		}

	}

	/** How often each stamp ran, by id. */
	static class Runs {

		private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

		int increment(String name) {
			return this.runs.computeIfAbsent(name, (n) -> new AtomicInteger()).incrementAndGet();
		}

		int of(String name) {
			AtomicInteger count = this.runs.get(name);
			return (count != null) ? count.get() : 0;
		}

	}

	/**
	 * The handler method, declared once: the controller's, and inherited by a bean that
	 * is no controller.
	 */
	abstract static class Stamps {

		private final Runs runs;

		private final String name;

		private final @Nullable Stamps next;

		Stamps(Runs runs, String name, @Nullable Stamps next) {
			this.runs = runs;
			this.name = name;
			this.next = next;
		}

		@PostMapping("/stamps")
		public String stamp(@RequestParam("id") String id) {
			String own = this.name + "-" + id + " #" + this.runs.increment(this.name + "-" + id);
			return (this.next != null) ? own + ", " + this.next.stamp(id) : own;
		}

	}

	/** Protected by the HTTP door: {@code @Idempotent} without a key expression. */
	@RestController
	@Idempotent
	static class StampController extends Stamps {

		StampController(Runs runs, KeyedStamps keyed) {
			super(runs, "handler", keyed);
		}

	}

	/** Protected by the method door, with the id as its key. */
	@Idempotent(key = "#id")
	static class KeyedStamps extends Stamps {

		KeyedStamps(Runs runs) {
			super(runs, "keyed", null);
		}

	}

}
