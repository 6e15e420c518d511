package dev.idempotency.test.servers;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.ScanOptions;
import org.springframework.test.context.DynamicPropertyRegistry;

/**
 * The machine's shared Redis (127.0.0.1:6379) for a test class that runs under a key
 * prefix of its own: the properties that point the store at it, and the clean-up of
 * exactly that prefix's keys.
 */
public final class SharedRedis {

	private SharedRedis() {
	}

	/** The Redis store on the shared server, under {@code prefix}. */
	public static void storeProperties(DynamicPropertyRegistry registry, String prefix) {
		registry.add("idempotency.store.type", () -> "redis");
		registry.add("idempotency.store.redis.key-prefix", () -> prefix);
		registry.add("spring.data.redis.host", () -> "127.0.0.1");
		registry.add("spring.data.redis.port", () -> "6379");
	}

	/** Deletes every key that starts with {@code prefix}, and no other. */
	public static void deleteKeys(String prefix) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", 6379),
				LettuceClientConfiguration.builder().commandTimeout(Duration.ofSeconds(10)).build());
		factory.afterPropertiesSet();
		factory.start();
		try (RedisConnection connection = factory.getConnection()) {
			List<byte[]> keys = new ArrayList<>();
			try (Cursor<byte[]> cursor = connection.keyCommands()
				.scan(ScanOptions.scanOptions().match(prefix + "*").count(1000).build())) {
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
