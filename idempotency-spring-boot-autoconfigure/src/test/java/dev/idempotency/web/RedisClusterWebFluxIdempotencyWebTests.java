package dev.idempotency.web;

import java.time.Duration;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;

import dev.idempotency.test.servers.RedisCluster;
import org.junit.jupiter.api.AfterAll;

import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * {@link WebFluxIdempotencyWebTests} on Redis Cluster (the
 * {@linkplain RedisCluster#shared() shared} cluster of this test run: three primaries,
 * three replicas), configured as an application would (Spring Boot's
 * {@code spring.data.redis.cluster.nodes}), under a key prefix of its own whose keys are
 * deleted afterwards. Blocking calls are watched: a store call the door did not move off
 * the event loop fails the test.
 */
class RedisClusterWebFluxIdempotencyWebTests extends WebFluxIdempotencyWebTests {

	private static final String PREFIX = "idem-webflux-cluster-" + UUID.randomUUID() + ":";

	@DynamicPropertySource
	static void store(DynamicPropertyRegistry registry) {
		RedisCluster cluster = RedisCluster.shared();
		registry.add("idempotency.store.type", () -> "redis");
		registry.add("idempotency.store.redis.key-prefix", () -> PREFIX);
		registry.add("spring.data.redis.cluster.nodes",
				() -> cluster.ports().stream().map((port) -> "127.0.0.1:" + port).collect(Collectors.joining(",")));
	}

	/** The keys under this class's prefix, on every primary, and no other. */
	@AfterAll
	static void deleteOwnKeys() {
		LettuceConnectionFactory factory = RedisCluster.shared().connectionFactory(Duration.ofSeconds(10));
		try (RedisClusterConnection connection = factory.getClusterConnection()) {
			Set<byte[]> keys = connection.keyCommands().keys((PREFIX + "*").getBytes());
			for (byte[] key : (keys != null) ? keys : Set.<byte[]>of()) {
				connection.keyCommands().del(key);
			}
		}
		finally {
			factory.destroy();
		}
	}

}
