package dev.idempotency.resilience;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import dev.idempotency.store.IdempotencyStoreException;
import dev.idempotency.store.RecordId;
import dev.idempotency.test.TestKeys;
import dev.idempotency.test.servers.TcpProxy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * A Redis that stops answering, with the application's Redis client left at its defaults
 * (no {@code spring.data.redis.timeout}: Lettuce would wait 60 s per command). The
 * store's own command timeout ({@code idempotency.store.redis.command-timeout}, 2 s by
 * default) must end each store call, so that a request is answered 503 in seconds, not in
 * a minute. The outage is a black hole (packets dropped: connections stay open, nothing
 * answers), then a closed port.
 */
class RedisStoreCutWithDefaultTimeoutsTests {

	/**
	 * Far below Lettuce's 60 s default; not a timing claim (the figure is printed, not
	 * asserted).
	 */
	private static final Duration NOT_A_MINUTE = Duration.ofSeconds(10);

	private final RedisStoreFixture fixture = new RedisStoreFixture();

	@AfterEach
	void removeKeys() {
		this.fixture.close();
	}

	@Test
	void aBlackholedRedisFailsStoreCallsAndAnswers503WithinSecondsNotAMinute() throws Exception {
		try (TcpProxy proxy = TcpProxy.to(this.fixture.port());
				Node node = Node.start("default-timeouts", defaultClientProperties(proxy.port()))) {
			RecordId id = new RecordId("timeout-test", TestKeys.newKey());
			assertThat(node.store().find(id)).isEmpty();
			String key = TestKeys.newKey();
			assertThat(Http.send(order(node, key)).statusCode()).isEqualTo(201);

			proxy.blackhole();
			Duration storeCall = timeStoreFailure(node, id);
			String cutKey = TestKeys.newKey();
			long sentAt = System.nanoTime();
			HttpResponse<byte[]> blackholed = Http.send(order(node, cutKey));
			Duration answered = Duration.ofNanos(System.nanoTime() - sentAt);
			assertThat(blackholed.statusCode()).as(Http.describe(blackholed)).isEqualTo(503);
			assertThat(Http.problemType(blackholed)).isEqualTo(Http.PROBLEMS + "store-unavailable");
			assertThat(answered).isLessThan(NOT_A_MINUTE);
			assertThat(node.runs("orders", cutKey)).isZero();

			proxy.close();
			Duration closedStoreCall = timeStoreFailure(node, id);
			sentAt = System.nanoTime();
			HttpResponse<byte[]> closed = Http.send(order(node, cutKey));
			Duration closedAnswered = Duration.ofNanos(System.nanoTime() - sentAt);
			assertThat(closed.statusCode()).as(Http.describe(closed)).isEqualTo(503);
			assertThat(closedAnswered).isLessThan(NOT_A_MINUTE);
			System.out.printf(
					"[resilience] %s: black hole: store call failed after %d ms, 503 after %d ms;"
							+ " closed port: store call failed after %d ms, 503 after %d ms%n",
					getClass().getSimpleName(), storeCall.toMillis(), answered.toMillis(), closedStoreCall.toMillis(),
					closedAnswered.toMillis());
		}
	}

	/**
	 * A blocking store call and a non-blocking one (the reactive doors'): both fail with
	 * the store's exception within the store's command timeout, not Lettuce's minute.
	 */
	private static Duration timeStoreFailure(Node node, RecordId id) {
		long startedAt = System.nanoTime();
		assertThatExceptionOfType(IdempotencyStoreException.class).isThrownBy(() -> node.store().find(id));
		Duration took = Duration.ofNanos(System.nanoTime() - startedAt);
		assertThat(took).isLessThan(NOT_A_MINUTE);
		long asyncStartedAt = System.nanoTime();
		CompletableFuture<?> found = node.store().findAsync(id, Runnable::run).toCompletableFuture();
		assertThatExceptionOfType(ExecutionException.class).isThrownBy(() -> found.get(1, TimeUnit.MINUTES))
			.havingCause()
			.isInstanceOf(IdempotencyStoreException.class);
		assertThat(Duration.ofNanos(System.nanoTime() - asyncStartedAt)).isLessThan(NOT_A_MINUTE);
		return took;
	}

	private Map<String, String> defaultClientProperties(int port) {
		Map<String, String> properties = Settings.with(this.fixture.properties(port, Duration.ZERO));
		properties.remove("spring.data.redis.timeout");
		properties.remove("spring.data.redis.connect-timeout");
		properties.remove("idempotency.store.redis.command-timeout");
		// The default command timeout (2 s) needs a longer lease than the suite's 3 s:
		// 1 s + 2 s + 0.25 s + 0.5 s < 4 s.
		properties.put("idempotency.lease", "4s");
		return properties;
	}

	private static java.net.http.HttpRequest order(Node node, String key) {
		return Http.post(node.uri("/orders"), key, "{\"name\":\"timeout\"}");
	}

}
