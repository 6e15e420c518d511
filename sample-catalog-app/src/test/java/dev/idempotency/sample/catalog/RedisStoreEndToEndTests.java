package dev.idempotency.sample.catalog;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.api.StatefulRedisConnection;
import org.junit.jupiter.api.AfterAll;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The Redis store on the shared Redis server (127.0.0.1:6379), under a key prefix of this
 * run's own whose keys the test deletes at the end; the catalog itself stays on H2.
 */
class RedisStoreEndToEndTests extends SharedStoreEndToEndTests {

	private static final String PREFIX = "idem-e2e-" + UUID.randomUUID() + ":";

	@DynamicPropertySource
	static void store(DynamicPropertyRegistry registry) {
		registry.add("idempotency.store.type", () -> "redis");
		registry.add("idempotency.store.redis.key-prefix", () -> PREFIX);
		registry.add("spring.data.redis.host", () -> "127.0.0.1");
		registry.add("spring.data.redis.port", () -> "6379");
	}

	@AfterAll
	static void deleteOwnKeys() {
		List<String> keys = ownKeys();
		if (!keys.isEmpty()) {
			withRedis((redis) -> redis.sync().del(keys.toArray(String[]::new)));
		}
	}

	@Override
	String expectedStore() {
		return "redis";
	}

	@Override
	long recordsInServer() {
		return ownKeys().size();
	}

	private static List<String> ownKeys() {
		List<String> keys = new ArrayList<>();
		withRedis((redis) -> {
			ScanCursor cursor = ScanCursor.INITIAL;
			do {
				KeyScanCursor<String> page = redis.sync()
					.scan(cursor, ScanArgs.Builder.matches(PREFIX + "*").limit(500));
				keys.addAll(page.getKeys());
				cursor = page;
			}
			while (!cursor.isFinished());
			return null;
		});
		return keys;
	}

	private static <T> T withRedis(java.util.function.Function<StatefulRedisConnection<String, String>, T> action) {
		RedisClient client = RedisClient.create("redis://127.0.0.1:6379");
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			return action.apply(connection);
		}
		finally {
			client.shutdown();
		}
	}

}
