package dev.idempotency.store.redis;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;

import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.IdempotencyStoreException;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.RecordState;
import dev.idempotency.store.ReserveRequest;
import dev.idempotency.store.ReserveResult;
import dev.idempotency.store.StoredResponse;
import dev.idempotency.store.StoredResponseCodec;

import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.RedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.data.redis.serializer.RedisSerializer;

/**
 * An {@link IdempotencyStore} in Redis, through Spring Data Redis.
 * <p>
 * One record is one hash under {@code <prefix>{<sha256 hex of scope and key>}}. Every transition
 * is one Lua script, so one atomic round trip, and reads Redis's own clock ({@code TIME}), never
 * this JVM's. The scripts are in one resource file, read by {@code RedisScripts}. Records expire
 * natively: the key gets a {@code PEXPIREAT} when it is created and keeps it through takeover,
 * heartbeat and completion, so {@link #purgeExpired} has nothing to do. The store never lists the
 * keyspace.
 * <p>
 * Values go through byte serializers only, so the stored response comes back byte for byte.
 */
public class RedisIdempotencyStore implements IdempotencyStore {

	private final RedisTemplate<byte[], byte[]> redis;

	private final String keyPrefix;

	private final RedisScripts scripts = new RedisScripts();

	/**
	 * Creates a store over the given connections.
	 * @param connectionFactory where the records live
	 * @param keyPrefix put before every key; must not contain <code>{</code> or <code>}</code>, so
	 * that the hash tag the store appends decides the Redis Cluster slot
	 */
	public RedisIdempotencyStore(RedisConnectionFactory connectionFactory, String keyPrefix) {
		Objects.requireNonNull(connectionFactory, "connectionFactory");
		Objects.requireNonNull(keyPrefix, "keyPrefix");
		if (keyPrefix.indexOf('{') >= 0 || keyPrefix.indexOf('}') >= 0) {
			// Redis Cluster hashes the first {...} of a key: braces in the prefix would put every
			// record in one slot
			throw new IllegalArgumentException("key prefix must not contain '{' or '}': " + keyPrefix);
		}
		this.keyPrefix = keyPrefix;
		RedisTemplate<byte[], byte[]> template = new RedisTemplate<>();
		template.setConnectionFactory(connectionFactory);
		template.setEnableDefaultSerializer(false);
		template.setKeySerializer(RedisSerializer.byteArray());
		template.setValueSerializer(RedisSerializer.byteArray());
		template.setHashKeySerializer(RedisSerializer.byteArray());
		template.setHashValueSerializer(RedisSerializer.byteArray());
		template.afterPropertiesSet();
		this.redis = template;
	}

	@Override
	public ReserveResult reserve(ReserveRequest request) {
		RecordId id = request.id();
		List<?> result = run("reserve", this.scripts.reserve, id, bytes(request.fingerprint()),
				bytes(request.operation()), bytes(request.ownerToken()), millis(request.lease()),
				millis(request.retention()), bytes(id.scope()), bytes(id.key()));
		String outcome = string((byte[]) result.get(0));
		return switch (outcome) {
			case "acquired" -> new ReserveResult.Acquired(false);
			case "taken_over" -> new ReserveResult.Acquired(true);
			case "existing" -> new ReserveResult.Existing(toRecord(id, (List<?>) result.get(1)));
			default -> throw new IdempotencyStoreException("unexpected reserve outcome from Redis: " + outcome);
		};
	}

	@Override
	public boolean complete(RecordId id, String ownerToken, StoredResponse response) {
		byte[] encoded = StoredResponseCodec.encode(response);
		return run("complete", this.scripts.complete, id, bytes(ownerToken), encoded) == 1L;
	}

	@Override
	public boolean release(RecordId id, String ownerToken) {
		return run("release", this.scripts.release, id, bytes(ownerToken)) == 1L;
	}

	@Override
	public boolean heartbeat(RecordId id, String ownerToken, Duration lease) {
		return run("heartbeat", this.scripts.heartbeat, id, bytes(ownerToken), millis(lease)) == 1L;
	}

	@Override
	public Optional<IdempotencyRecord> find(RecordId id) {
		List<?> fields = run("find", this.scripts.find, id);
		return fields.isEmpty() ? Optional.empty() : Optional.of(toRecord(id, fields));
	}

	/** Redis removes expired keys itself: there is nothing to purge. */
	@Override
	public int purgeExpired(int maxRecords) {
		return 0;
	}

	@Override
	public String name() {
		return "redis";
	}

	/** The prefix this store puts before its keys. */
	public String keyPrefix() {
		return this.keyPrefix;
	}

	/**
	 * The Redis key of a record: the prefix, then a hash tag holding the SHA-256 (hex) of the
	 * scope's length, the scope and the key. Hashing keeps any character of the scope (braces
	 * included) out of the key, and the length makes the split between scope and key unambiguous.
	 */
	String key(RecordId id) {
		byte[] scope = bytes(id.scope());
		byte[] key = bytes(id.key());
		MessageDigest sha256 = sha256();
		sha256.update(ByteBuffer.allocate(4).putInt(scope.length).array());
		sha256.update(scope);
		sha256.update(key);
		return this.keyPrefix + "{" + HexFormat.of().formatHex(sha256.digest()) + "}";
	}

	/** The scripts this store runs, for tests that check how they are sent. */
	RedisScripts scripts() {
		return this.scripts;
	}

	private <T> T run(String transition, RedisScript<T> script, RecordId id, byte[]... args) {
		T result = execute(transition,
				() -> this.redis.execute(script, RedisSerializer.byteArray(), resultSerializer(), List.of(bytes(key(id))),
						(Object[]) args));
		if (result == null) {
			throw new IdempotencyStoreException("Redis returned no result for " + transition);
		}
		return result;
	}

	@SuppressWarnings("unchecked")
	private static <T> RedisSerializer<T> resultSerializer() {
		// bulk replies stay byte[] (lists are deserialized element by element), integers stay Long
		return (RedisSerializer<T>) RedisSerializer.byteArray();
	}

	private static <T> T execute(String transition, Supplier<T> call) {
		try {
			return call.get();
		}
		catch (DataAccessException ex) {
			throw new IdempotencyStoreException("Redis idempotency store failed to " + transition, ex);
		}
	}

	private static IdempotencyRecord toRecord(RecordId id, List<?> flat) {
		Map<String, byte[]> fields = new HashMap<>();
		for (int i = 0; i + 1 < flat.size(); i += 2) {
			fields.put(string((byte[]) flat.get(i)), (byte[]) flat.get(i + 1));
		}
		RecordState state = RecordState.valueOf(requiredString(fields, "state"));
		boolean inProgress = state == RecordState.IN_PROGRESS;
		return new IdempotencyRecord(id, requiredString(fields, "fingerprint"), requiredString(fields, "operation"),
				state, inProgress ? instant(requiredString(fields, "lease_until_ms")) : null,
				instant(requiredString(fields, "expires_at_ms")),
				inProgress ? null : StoredResponseCodec.decode(required(fields, "response")));
	}

	private static String requiredString(Map<String, byte[]> fields, String name) {
		return string(required(fields, name));
	}

	private static byte[] required(Map<String, byte[]> fields, String name) {
		byte[] value = fields.get(name);
		if (value == null) {
			throw new IdempotencyStoreException("Redis idempotency record lacks field '" + name + "'");
		}
		return value;
	}

	private static Instant instant(String epochMillis) {
		return Instant.ofEpochMilli(Long.parseLong(epochMillis));
	}

	/** Whole milliseconds, rounded up so that a positive duration never becomes zero. */
	private static byte[] millis(Duration duration) {
		long millis = duration.toMillis();
		if (duration.compareTo(Duration.ofMillis(millis)) > 0) {
			millis++;
		}
		return bytes(Long.toString(millis));
	}

	private static MessageDigest sha256() {
		try {
			return MessageDigest.getInstance("SHA-256");
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("every Java platform has SHA-256", ex);
		}
	}

	private static byte[] bytes(String value) {
		return value.getBytes(StandardCharsets.UTF_8);
	}

	private static String string(byte[] value) {
		return new String(value, StandardCharsets.UTF_8);
	}

}
