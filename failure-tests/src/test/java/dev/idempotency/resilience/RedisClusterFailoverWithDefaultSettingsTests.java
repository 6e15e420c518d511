package dev.idempotency.resilience;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Collectors;

import dev.idempotency.test.TestKeys;
import dev.idempotency.test.servers.RedisCluster;
import dev.idempotency.test.servers.RedisServer;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Redis Cluster primary holding a completed record is killed (SIGKILL) under a node
 * whose Redis settings are Spring Boot's defaults apart from
 * {@code spring.data.redis.cluster.nodes} (no topology refresh, no timeouts): a real
 * application context with Boot's Redis auto-configuration. Once a replica has been
 * promoted, the retry must be answered with the replay: the store's own connection has to
 * learn the new topology by itself.
 */
class RedisClusterFailoverWithDefaultSettingsTests {

	/** What the issue asks for; the failover itself takes about 4 s here. */
	private static final Duration REPLAY_WITHIN = Duration.ofSeconds(15);

	private final String prefix = "idem-cluster-defaults-" + UUID.randomUUID() + ":";

	@Test
	void theRecordOfAKilledPrimaryIsReplayedFromThePromotedReplica() throws Exception {
		try (RedisCluster cluster = RedisCluster.start(3);
				Node node = Node.start("cluster-defaults", Settings.with(properties(cluster)))) {
			String key = TestKeys.newKey();
			HttpResponse<byte[]> first = Http.send(order(node, key));
			assertThat(first.statusCode()).as(Http.describe(first)).isEqualTo(201);

			int primary = holderOfTheRecord(cluster);
			awaitOnReplica(cluster.replicaOf(primary));
			long killedAt = System.nanoTime();
			cluster.kill(primary);

			HttpResponse<byte[]> retry = Http.send(order(node, key));
			int refused = 0;
			while (retry.statusCode() == 503 && System.nanoTime() - killedAt < 2 * REPLAY_WITHIN.toNanos()) {
				refused++;
				Thread.sleep(200);
				retry = Http.send(order(node, key));
			}
			Duration answeredAfter = Duration.ofNanos(System.nanoTime() - killedAt);
			System.out.printf("[resilience] %s: primary killed, replay after %d ms (%d answers 503 before)%n",
					getClass().getSimpleName(), answeredAfter.toMillis(), refused);
			assertThat(retry.statusCode()).as(Http.describe(retry)).isEqualTo(201);
			assertThat(Http.replayed(retry)).as("replayed").isTrue();
			assertThat(retry.body()).isEqualTo(first.body());
			assertThat(node.runs("orders", key)).isEqualTo(1);
			assertThat(answeredAfter).isLessThan(REPLAY_WITHIN);
		}
	}

	/** The primary whose keyspace holds this run's only record. */
	private int holderOfTheRecord(RedisCluster cluster) {
		List<Integer> holders = cluster.masters().stream().filter((port) -> holdsARecord(port)).toList();
		assertThat(holders).hasSize(1);
		return holders.get(0);
	}

	/**
	 * Replication is asynchronous: kill the primary only once its replica has the record.
	 */
	private void awaitOnReplica(int replica) throws InterruptedException {
		long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
		while (!holdsARecord(replica)) {
			assertThat(System.nanoTime()).as("the replica has the record").isLessThan(deadline);
			Thread.sleep(50);
		}
	}

	private boolean holdsARecord(int port) {
		return !RedisServer.cli(port, "--scan", "--pattern", this.prefix + "*").isBlank();
	}

	/**
	 * Only the store type, its prefix and the cluster's nodes: Boot's defaults otherwise.
	 */
	private Map<String, String> properties(RedisCluster cluster) {
		Map<String, String> properties = new LinkedHashMap<>();
		properties.put("idempotency.store.type", "redis");
		properties.put("idempotency.store.redis.key-prefix", this.prefix);
		properties.put("spring.data.redis.cluster.nodes",
				cluster.ports().stream().map((port) -> "127.0.0.1:" + port).collect(Collectors.joining(",")));
		properties.put("spring.autoconfigure.exclude",
				"org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration");
		return properties;
	}

	private static HttpRequest order(Node node, String key) {
		return Http.post(node.uri("/orders"), key, "{\"name\":\"cluster-defaults\"}");
	}

}
