package dev.idempotency.web.keys;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import org.junit.jupiter.api.AfterAll;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.ScanOptions;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * {@link KeyFormatsOverHttpTests} on the shared Redis, under a key prefix of this run's
 * own.
 */
class RedisKeyFormatsOverHttpTests extends KeyFormatsOverHttpTests {

	private static final String PREFIX = "idem-keys-" + UUID.randomUUID() + ":";

	@DynamicPropertySource
	static void store(DynamicPropertyRegistry registry) {
		registry.add("idempotency.store.type", () -> "redis");
		registry.add("idempotency.store.redis.key-prefix", () -> PREFIX);
		registry.add("spring.data.redis.host", () -> "127.0.0.1");
		registry.add("spring.data.redis.port", () -> "6379");
	}

	@AfterAll
	static void deleteOwnKeys() {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", 6379),
				LettuceClientConfiguration.builder().commandTimeout(Duration.ofSeconds(10)).build());
		factory.afterPropertiesSet();
		factory.start();
		try (RedisConnection connection = factory.getConnection()) {
			List<byte[]> keys = new ArrayList<>();
			try (Cursor<byte[]> cursor = connection.keyCommands()
				.scan(ScanOptions.scanOptions().match(PREFIX + "*").count(1000).build())) {
				cursor.forEachRemaining(keys::add);
			}
			for (byte[] key : keys) {
				connection.keyCommands().del(key);
			}
		}
		finally {
			factory.destroy();
		}
	}

}
