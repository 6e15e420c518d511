package dev.idempotency.sample.catalog;

import java.util.UUID;
import java.util.stream.Collectors;

import dev.idempotency.store.redis.RedisCluster;
import org.junit.jupiter.api.AfterAll;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The Redis store on a Redis Cluster of this run's own (three primaries, three replicas,
 * started from the machine's {@code redis-server} and stopped afterwards), reached with
 * {@code spring.data.redis.cluster.nodes}; the catalog itself stays on H2. Lease mode;
 * {@link RedisClusterStoreRecordAfterSuccessTests} runs the same in record-after-success
 * mode, on a cluster of its own.
 */
class RedisClusterStoreEndToEndTests extends SharedStoreEndToEndTests {

	private static final String PREFIX = "idem-e2e-cluster-" + UUID.randomUUID() + ":";

	/** The cluster of the class running now (test classes run one after another). */
	private static RedisCluster cluster;

	@DynamicPropertySource
	static void store(DynamicPropertyRegistry registry) {
		RedisCluster own = RedisCluster.start(3);
		cluster = own;
		registry.add("idempotency.store.type", () -> "redis");
		registry.add("idempotency.store.redis.key-prefix", () -> PREFIX);
		registry.add("spring.data.redis.cluster.nodes",
				() -> own.ports().stream().map((port) -> "127.0.0.1:" + port).collect(Collectors.joining(",")));
	}

	@AfterAll
	static void stopCluster() {
		if (cluster != null) {
			cluster.close();
			cluster = null;
		}
	}

	@Override
	String expectedStore() {
		return "redis";
	}

	@Override
	protected long recordsInStore() {
		// Each primary holds the records of its slots.
		return cluster.masters()
			.stream()
			.mapToLong((port) -> RedisCluster.cli(port, "--scan", "--pattern", PREFIX + "*").lines().count())
			.sum();
	}

}
