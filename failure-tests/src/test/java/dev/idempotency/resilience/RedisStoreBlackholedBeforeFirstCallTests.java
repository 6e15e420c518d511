package dev.idempotency.resilience;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.IdempotencyStoreException;
import dev.idempotency.store.RecordId;
import dev.idempotency.test.TestKeys;
import dev.idempotency.test.servers.TcpProxy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * A Redis black-holed (connections accepted, nothing answered) before the store's first
 * call, so that its connection is not open: a node started during the outage, or one
 * whose factory reset the connection after a failure. Many requests at once must each
 * fail within about the store's command timeout ({@code 1 s} here), not wait in turn for
 * each other's attempt to open the connection ({@code N × timeout}), and the first call
 * after the network heals must succeed: a failed attempt to open is not kept.
 * <p>
 * The application's Redis client is left at its defaults (Lettuce's 60 s command
 * timeout), as in the outage an outside tester reported: 40 requests, 84 s.
 */
class RedisStoreBlackholedBeforeFirstCallTests {

	private static final int CONCURRENT = 20;

	private static final Duration TIMEOUT = Duration.ofSeconds(1);

	/**
	 * A few timeouts (the wait for the shared attempt to open, then the command), far
	 * below {@code CONCURRENT × TIMEOUT} = 20 s.
	 */
	private static final Duration BOUND = Duration.ofSeconds(5);

	private final RedisStoreFixture fixture = new RedisStoreFixture();

	@AfterEach
	void removeKeys() {
		this.fixture.close();
	}

	@Test
	void concurrentCallsFailWithinAboutTheTimeoutNotInTurnAndTheFirstCallAfterHealingSucceeds() throws Exception {
		try (TcpProxy proxy = TcpProxy.to(this.fixture.port())) {
			proxy.blackhole();
			try (Node node = Node.start("blackholed-before-first-call", properties(proxy.port()))) {
				IdempotencyStore store = node.store();

				List<Duration> storeCalls = concurrently(() -> {
					RecordId id = new RecordId("blackholed", TestKeys.newKey());
					long startedAt = System.nanoTime();
					assertThatExceptionOfType(IdempotencyStoreException.class).isThrownBy(() -> store.find(id));
					return Duration.ofNanos(System.nanoTime() - startedAt);
				});
				assertThat(storeCalls).as("each store call").allSatisfy((took) -> assertThat(took).isLessThan(BOUND));

				List<String> keys = new ArrayList<>();
				List<Duration> requests = concurrently(() -> {
					String key = TestKeys.newKey();
					synchronized (keys) {
						keys.add(key);
					}
					long sentAt = System.nanoTime();
					HttpResponse<byte[]> response = Http.send(order(node, key));
					Duration took = Duration.ofNanos(System.nanoTime() - sentAt);
					assertThat(response.statusCode()).as(Http.describe(response)).isEqualTo(503);
					assertThat(response.headers().firstValue("Retry-After")).isPresent();
					assertThat(Http.problemType(response)).isEqualTo(Http.PROBLEMS + "store-unavailable");
					return took;
				});
				assertThat(requests).as("each request").allSatisfy((took) -> assertThat(took).isLessThan(BOUND));
				for (String key : keys) {
					assertThat(node.runs("orders", key)).isZero();
				}

				proxy.heal();
				// an attempt begun during the black hole ends within its handshake
				// timeout (the store's command timeout); the next call starts afresh
				Thread.sleep(2 * TIMEOUT.toMillis());
				RecordId id = new RecordId("blackholed", TestKeys.newKey());
				assertThat(store.find(id)).isEmpty();
				String key = TestKeys.newKey();
				HttpResponse<byte[]> healed = Http.send(order(node, key));
				assertThat(healed.statusCode()).as(Http.describe(healed)).isEqualTo(201);
				assertThat(node.runs("orders", key)).isEqualTo(1);
				System.out.printf(
						"[resilience] %s: %d store calls at once failed within %d ms (slowest), %d requests"
								+ " answered 503 within %d ms (slowest)%n",
						getClass().getSimpleName(), CONCURRENT, slowest(storeCalls).toMillis(), CONCURRENT,
						slowest(requests).toMillis());
			}
		}
	}

	/**
	 * Runs {@code call} on {@link #CONCURRENT} threads at once; the time each took, once
	 * all are done.
	 */
	private static List<Duration> concurrently(java.util.concurrent.Callable<Duration> call) throws Exception {
		ExecutorService threads = Executors.newFixedThreadPool(CONCURRENT);
		try {
			CountDownLatch start = new CountDownLatch(1);
			List<Future<Duration>> calls = new ArrayList<>();
			for (int i = 0; i < CONCURRENT; i++) {
				calls.add(threads.submit(() -> {
					start.await();
					return call.call();
				}));
			}
			start.countDown();
			List<Duration> took = new ArrayList<>();
			for (Future<Duration> each : calls) {
				took.add(each.get());
			}
			return took;
		}
		finally {
			threads.shutdownNow();
		}
	}

	private static Duration slowest(List<Duration> durations) {
		return durations.stream().max(Duration::compareTo).orElse(Duration.ZERO);
	}

	/**
	 * The shared settings (the store's command timeout 1 s) and no Redis timeouts of the
	 * application's own; no eviction check, which would try the connection at start-up.
	 */
	private Map<String, String> properties(int port) {
		Map<String, String> properties = Settings.with(this.fixture.properties(port, Duration.ZERO));
		properties.remove("spring.data.redis.timeout");
		properties.remove("spring.data.redis.connect-timeout");
		properties.put("idempotency.store.redis.command-timeout", TIMEOUT.toMillis() + "ms");
		properties.put("idempotency.store.redis.eviction-check", "off");
		return properties;
	}

	private static HttpRequest order(Node node, String key) {
		return Http.post(node.uri("/orders"), key, "{\"name\":\"blackholed\"}");
	}

}
