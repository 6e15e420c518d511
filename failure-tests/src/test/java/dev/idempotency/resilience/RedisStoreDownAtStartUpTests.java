package dev.idempotency.resilience;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import dev.idempotency.test.TestKeys;
import dev.idempotency.test.servers.RedisServer;
import dev.idempotency.test.servers.TcpProxy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A node started while its Redis refuses connections (a node restarted during a Redis
 * outage), with the application's Redis client settings left at their defaults. It must
 * start, report the idempotency store down, answer keyed requests 503 with Retry-After
 * without running them, and protect them as soon as Redis answers: nothing the store
 * needs (connection, scripts) may be prepared only at start-up.
 * <p>
 * The Redis is a {@code redis-server} of this test's own ({@link RedisServer}), fresh, so
 * that its script cache is empty: the scripts must be loaded by the store's first calls
 * once it answers.
 */
class RedisStoreDownAtStartUpTests {

	private RedisServer redis;

	private int redisPort;

	@BeforeEach
	void startRedis() {
		this.redis = RedisServer.standalone();
		this.redisPort = this.redis.port();
	}

	@AfterEach
	void stopRedis() {
		this.redis.close();
	}

	@Test
	void aNodeStartedWhileRedisRefusesStartsAnswers503AndProtectsRequestsOnceRedisAnswers() throws Exception {
		try (TcpProxy proxy = TcpProxy.to(this.redisPort)) {
			proxy.cut();
			try (Node node = Node.start("down-at-start", Settings.with(defaultClientProperties(proxy.port())))) {
				HealthIndicator health = node.bean("idempotencyHealthIndicator", HealthIndicator.class);
				assertThat(health.health().getStatus()).isEqualTo(Status.DOWN);

				String key = TestKeys.newKey();
				HttpResponse<byte[]> refused = Http.send(order(node, key));
				assertThat(refused.statusCode()).as(Http.describe(refused)).isEqualTo(503);
				assertThat(refused.headers().firstValue("Retry-After")).isPresent();
				assertThat(Http.problemType(refused)).isEqualTo(Http.PROBLEMS + "store-unavailable");
				assertThat(node.runs("orders", key)).isZero();

				proxy.restore();
				HttpResponse<byte[]> first = sendUntilNot503(order(node, key), Duration.ofSeconds(15));
				assertThat(first.statusCode()).as(Http.describe(first)).isEqualTo(201);
				assertThat(Http.replayed(first)).isFalse();
				HttpResponse<byte[]> retry = Http.send(order(node, key));
				assertThat(retry.statusCode()).as(Http.describe(retry)).isEqualTo(201);
				assertThat(Http.replayed(retry)).as("replayed").isTrue();
				assertThat(retry.body()).isEqualTo(first.body());
				assertThat(node.runs("orders", key)).isEqualTo(1);
				assertThat(health.health().getStatus()).isEqualTo(Status.UP);
				assertThat(RedisServer.cli(this.redisPort, "INFO", "commandstats"))
					.as("the scripts were loaded (EVAL after NOSCRIPT) once Redis answered")
					.contains("cmdstat_eval:calls=");
			}
		}
	}

	private static HttpResponse<byte[]> sendUntilNot503(HttpRequest request, Duration within)
			throws InterruptedException {
		long deadline = System.nanoTime() + within.toNanos();
		HttpResponse<byte[]> response = Http.send(request);
		while (response.statusCode() == 503 && System.nanoTime() < deadline) {
			Thread.sleep(200);
			response = Http.send(request);
		}
		return response;
	}

	/** No Redis timeouts of the application's own: Boot's and Lettuce's defaults. */
	private static Map<String, String> defaultClientProperties(int port) {
		Map<String, String> properties = new LinkedHashMap<>();
		properties.put("idempotency.store.type", "redis");
		properties.put("spring.data.redis.host", "127.0.0.1");
		properties.put("spring.data.redis.port", Integer.toString(port));
		properties.put("spring.autoconfigure.exclude",
				"org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration");
		return properties;
	}

	private static HttpRequest order(Node node, String key) {
		return Http.post(node.uri("/orders"), key, "{\"name\":\"down-at-start\"}");
	}

}
