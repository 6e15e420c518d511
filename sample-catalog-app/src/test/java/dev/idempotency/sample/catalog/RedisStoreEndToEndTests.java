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
 * context's own whose keys the class deletes at the end; the catalog itself stays on H2.
 * Lease mode; {@link RedisStoreRecordAfterSuccessTests} runs the same in
 * record-after-success mode, under a prefix of its own.
 */
class RedisStoreEndToEndTests extends SharedStoreEndToEndTests {

	/** The key prefix of the class running now (test classes run one after another). */
	private static String prefix;

	@DynamicPropertySource
	static void store(DynamicPropertyRegistry registry) {
		String own = "idem-e2e-" + UUID.randomUUID() + ":";
		prefix = own;
		registry.add("idempotency.store.type", () -> "redis");
		registry.add("idempotency.store.redis.key-prefix", () -> own);
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
	protected long recordsInStore() {
		return ownKeys().size();
	}

	private static List<String> ownKeys() {
		List<String> keys = new ArrayList<>();
		withRedis((redis) -> {
			ScanCursor cursor = ScanCursor.INITIAL;
			do {
				KeyScanCursor<String> page = redis.sync()
					.scan(cursor, ScanArgs.Builder.matches(prefix + "*").limit(500));
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
