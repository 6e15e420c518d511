package dev.idempotency.sample.catalog;

import java.util.UUID;
import java.util.stream.Collectors;

import dev.idempotency.test.servers.RedisCluster;
import dev.idempotency.test.servers.RedisServer;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The Redis store on a Redis Cluster of this run's own (three primaries, three replicas,
 * started from the machine's {@code redis-server}: the {@linkplain RedisCluster#shared()
 * shared} one, stopped when the test JVM exits), under a key prefix of this context's
 * own, reached with {@code spring.data.redis.cluster.nodes}; the catalog itself stays on
 * H2. Lease mode; {@link RedisClusterStoreRecordAfterSuccessTests} runs the same in
 * record-after-success mode, under a prefix of its own.
 */
class RedisClusterStoreEndToEndTests extends SharedStoreEndToEndTests {

	/** The key prefix of the class running now (test classes run one after another). */
	private static String prefix;

	@DynamicPropertySource
	static void store(DynamicPropertyRegistry registry) {
		RedisCluster cluster = RedisCluster.shared();
		String own = "idem-e2e-cluster-" + UUID.randomUUID() + ":";
		prefix = own;
		registry.add("idempotency.store.type", () -> "redis");
		registry.add("idempotency.store.redis.key-prefix", () -> own);
		registry.add("spring.data.redis.cluster.nodes",
				() -> cluster.ports().stream().map((port) -> "127.0.0.1:" + port).collect(Collectors.joining(",")));
	}

	@Override
	String expectedStore() {
		return "redis";
	}

	@Override
	protected long recordsInStore() {
		// Each primary holds the records of its slots.
		return RedisCluster.shared()
			.masters()
			.stream()
			.mapToLong((port) -> RedisServer.cli(port, "--scan", "--pattern", prefix + "*").lines().count())
			.sum();
	}

}
