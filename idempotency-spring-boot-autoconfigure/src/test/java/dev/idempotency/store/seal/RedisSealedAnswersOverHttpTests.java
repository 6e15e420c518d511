package dev.idempotency.store.seal;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.UUID;

import dev.idempotency.test.servers.SharedRedis;
import org.junit.jupiter.api.AfterAll;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.ScanOptions;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * {@link SealedAnswersOverHttpTests} on the shared Redis, under a key prefix of this
 * run's own: the answer read with {@code HGET <record> response}, swapped with
 * {@code HSET}.
 */
class RedisSealedAnswersOverHttpTests extends SealedAnswersOverHttpTests {

	private static final String PREFIX = "idem-sealed-" + UUID.randomUUID() + ":";

	@Autowired
	private RedisConnectionFactory connectionFactory;

	@DynamicPropertySource
	static void store(DynamicPropertyRegistry registry) {
		SharedRedis.storeProperties(registry, PREFIX);
	}

	@AfterAll
	static void deleteOwnKeys() {
		SharedRedis.deleteKeys(PREFIX);
	}

	@Override
	byte[] storedAnswer(String key) {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			return Objects.requireNonNull(connection.hashCommands().hGet(recordOf(connection, key), field("response")));
		}
	}

	@Override
	void swapStoredAnswers(String key, String otherKey) {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			byte[] record = recordOf(connection, key);
			byte[] other = recordOf(connection, otherKey);
			byte[] answer = connection.hashCommands().hGet(record, field("response"));
			byte[] otherAnswer = connection.hashCommands().hGet(other, field("response"));
			connection.hashCommands().hSet(record, field("response"), Objects.requireNonNull(otherAnswer));
			connection.hashCommands().hSet(other, field("response"), Objects.requireNonNull(answer));
		}
	}

	/** The Redis key of the record whose {@code key} field is the client's key. */
	private static byte[] recordOf(RedisConnection connection, String key) {
		List<byte[]> records = new ArrayList<>();
		try (Cursor<byte[]> cursor = connection.keyCommands()
			.scan(ScanOptions.scanOptions().match(PREFIX + "*").count(1000).build())) {
			cursor.forEachRemaining(records::add);
		}
		return records.stream()
			.filter((record) -> Arrays.equals(connection.hashCommands().hGet(record, field("key")), field(key)))
			.findFirst()
			.orElseThrow(() -> new IllegalStateException("no record of " + key + " under " + PREFIX));
	}

	private static byte[] field(String name) {
		return name.getBytes(StandardCharsets.UTF_8);
	}

}
