package dev.idempotency.store.redis;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Predicate;

import dev.idempotency.store.CompletedRecordRequest;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.IdempotencyStoreException;
import dev.idempotency.store.InspectedRecord;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.ReserveRequest;
import dev.idempotency.store.ReserveResult;
import dev.idempotency.store.StoredResponse;
import dev.idempotency.store.StoredResponseCodec;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.ReturnType;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.RedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.data.redis.serializer.RedisSerializer;
import org.springframework.util.ClassUtils;

/**
 * An {@link IdempotencyStore} in Redis, through Spring Data Redis.
 * <p>
 * With a {@code LettuceConnectionFactory} that shares its native connection (Lettuce's
 * and Spring Boot's default) the scripts go through Lettuce's own commands on that one
 * connection, taken from the factory once; with any other factory (Jedis, a Lettuce
 * factory with {@code shareNativeConnection=false}) through a {@code RedisTemplate}, one
 * connection of the factory per call.
 * <p>
 * One record is one hash under {@code <prefix>{<sha256 hex of scope and key>}}. Every
 * transition is one Lua script, so one atomic round trip, and reads Redis's own clock
 * ({@code TIME}), never this JVM's. The scripts are in one resource file, read by
 * {@code RedisScripts}. Records expire natively: the key gets a {@code PEXPIREAT} when it
 * is created (reserved, or recorded completed) and keeps it through takeover, heartbeat
 * and completion, so {@link #purgeExpired} has nothing to do. The store never lists the
 * keyspace.
 * <p>
 * Values go through byte serializers only, so the stored response comes back byte for
 * byte.
 * <p>
 * Built with {@link #builder(RedisConnectionFactory, String)} (defaults: the
 * {@code idempotency.store.redis.*} properties); its constructor is package-private so
 * that AOP proxies can subclass it.
 *
 * @since 0.1.0
 */
public class RedisIdempotencyStore implements IdempotencyStore {

	private static final boolean LETTUCE_PRESENT = ClassUtils.isPresent("io.lettuce.core.RedisClient",
			RedisIdempotencyStore.class.getClassLoader());

	private final RedisTemplate<byte[], byte[]> redis;

	/** Lettuce's own commands on the factory's shared connection, when it has one. */
	private final @Nullable LettuceCommands lettuce;

	private final String keyPrefix;

	private final RedisScripts scripts = new RedisScripts();

	private final int replicasToAck;

	private final Duration replicasAckTimeout;

	RedisIdempotencyStore(Builder builder) {
		this.keyPrefix = builder.keyPrefix;
		this.replicasToAck = builder.replicasToAck;
		this.replicasAckTimeout = builder.replicasAckTimeout;
		RedisTemplate<byte[], byte[]> template = new RedisTemplate<>();
		template.setConnectionFactory(builder.connectionFactory);
		template.setEnableDefaultSerializer(false);
		template.setKeySerializer(RedisSerializer.byteArray());
		template.setValueSerializer(RedisSerializer.byteArray());
		template.setHashKeySerializer(RedisSerializer.byteArray());
		template.setHashValueSerializer(RedisSerializer.byteArray());
		template.afterPropertiesSet();
		this.redis = template;
		this.lettuce = LETTUCE_PRESENT ? LettuceCommands.of(builder.connectionFactory) : null;
	}

	/**
	 * A builder of a store over the given connections, with the defaults of the
	 * {@code idempotency.store.redis.*} properties: acknowledged as soon as the primary
	 * has applied a transition.
	 * @param connectionFactory where the records live
	 * @param keyPrefix put before every key; must not contain <code>{</code> or
	 * <code>}</code>, so that the hash tag the store appends decides the Redis Cluster
	 * slot
	 * @since 0.2.0
	 */
	public static Builder builder(RedisConnectionFactory connectionFactory, String keyPrefix) {
		return new Builder(connectionFactory, keyPrefix);
	}

	@Override
	public ReserveResult reserve(ReserveRequest request) {
		RecordId id = request.id();
		List<?> result;
		try {
			result = run("reserve", this.scripts.reserve, id, RedisReplies::reservedHere, bytes(request.fingerprint()),
					bytes(request.operation()), bytes(request.ownerToken()), millis(request.lease()),
					millis(request.retention()), bytes(id.scope()), bytes(id.key()));
		}
		catch (NotReplicatedException ex) {
			// the reservation is on the primary only: give it back rather than leave it
			// in flight under a token whose request is answered with an error
			try {
				release(id, request.ownerToken());
			}
			catch (IdempotencyStoreException releaseFailure) {
				ex.addSuppressed(releaseFailure);
			}
			throw ex;
		}
		String outcome = string((byte[]) result.get(0));
		return switch (outcome) {
			case "acquired" -> new ReserveResult.Acquired(false);
			case "taken_over" -> new ReserveResult.Acquired(true);
			case "existing" -> new ReserveResult.Existing(RedisReplies.toRecord(id, (List<?>) result.get(1)));
			default -> throw new IdempotencyStoreException("unexpected reserve outcome from Redis: " + outcome);
		};
	}

	@Override
	public boolean complete(RecordId id, String ownerToken, StoredResponse response) {
		byte[] encoded = StoredResponseCodec.encode(response);
		return run("complete", this.scripts.complete, id, (done) -> done == 1L, bytes(ownerToken), encoded) == 1L;
	}

	@Override
	public boolean release(RecordId id, String ownerToken) {
		return run("release", this.scripts.release, id, noWait(), bytes(ownerToken)) == 1L;
	}

	@Override
	public boolean heartbeat(RecordId id, String ownerToken, Duration lease) {
		return run("heartbeat", this.scripts.heartbeat, id, noWait(), bytes(ownerToken), millis(lease)) == 1L;
	}

	/**
	 * One script: creates the record {@code COMPLETED} where no live record is, else
	 * returns the live one unchanged. With {@code replicasToAck} a record it created is
	 * waited for like a completion; if the replicas do not acknowledge it, the call fails
	 * and the record stays on the primary, as a completion does (the operation has run:
	 * deleting its answer would let a retry run it again).
	 */
	@Override
	public Optional<IdempotencyRecord> recordCompleted(CompletedRecordRequest request) {
		RecordId id = request.id();
		List<?> result = run("record a completed response", this.scripts.recordCompleted, id,
				RedisReplies::recordedHere, bytes(request.fingerprint()), bytes(request.operation()),
				StoredResponseCodec.encode(request.response()), millis(request.retention()), bytes(id.scope()),
				bytes(id.key()));
		String outcome = string((byte[]) result.get(0));
		return switch (outcome) {
			case "recorded" -> Optional.empty();
			case "existing" -> Optional.of(RedisReplies.toRecord(id, (List<?>) result.get(1)));
			default -> throw new IdempotencyStoreException("unexpected record outcome from Redis: " + outcome);
		};
	}

	@Override
	public Optional<IdempotencyRecord> find(RecordId id) {
		List<?> fields = run("find", this.scripts.find, id, noWait());
		return fields.isEmpty() ? Optional.empty() : Optional.of(RedisReplies.toRecord(id, fields));
	}

	/**
	 * The record with its {@code created_ms} and {@code owner} fields, from {@code find}.
	 */
	@Override
	public Optional<InspectedRecord> inspect(RecordId id) {
		List<?> flat = run("inspect", this.scripts.find, id, noWait());
		if (flat.isEmpty()) {
			return Optional.empty();
		}
		return Optional.of(RedisReplies.toInspectedRecord(id, flat));
	}

	/**
	 * Not waited for by replicas: a removal lost in a failover leaves the record as it
	 * was, for the operator to remove again.
	 */
	@Override
	public boolean remove(RecordId id) {
		return run("remove", this.scripts.remove, id, noWait()) == 1L;
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
	 * The Redis key of a record: the prefix, then a hash tag holding the SHA-256 (hex) of
	 * the scope's length, the scope and the key. Hashing keeps any character of the scope
	 * (braces included) out of the key, and the length makes the split between scope and
	 * key unambiguous.
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

	/**
	 * Runs one script on the record's key and, when the script wrote something that must
	 * reach replicas ({@code wrote}), {@code WAIT}s for them on the same connection:
	 * {@code WAIT} counts the writes of the connection it is sent on, so it must follow
	 * the script there (in Redis Cluster, on the connection to the primary of the key's
	 * slot). Scripts go by SHA ({@code EVALSHA}) and fall back to {@code EVAL} on
	 * {@code NOSCRIPT}.
	 */
	private <T> T run(String transition, RedisScript<T> script, RecordId id, Predicate<T> wrote, byte[]... args) {
		byte[] key = bytes(key(id));
		@Nullable T result;
		try {
			LettuceCommands lettuce = this.lettuce;
			result = (lettuce != null) ? runNative(lettuce, transition, script, key, wrote, args)
					: runThroughTemplate(transition, script, key, wrote, args);
		}
		catch (DataAccessException ex) {
			throw new IdempotencyStoreException("Redis idempotency store failed to " + transition, ex);
		}
		if (result == null) {
			throw new IdempotencyStoreException("Redis returned no result for " + transition);
		}
		return result;
	}

	private <T> @Nullable T runNative(LettuceCommands lettuce, String transition, RedisScript<T> script, byte[] key,
			Predicate<T> wrote, byte[][] args) {
		T value = lettuce.eval(transition, script, key, args);
		if (value != null && this.replicasToAck > 0 && wrote.test(value)) {
			checkReplicas(lettuce.awaitReplicas(key, this.replicasToAck, this.replicasAckTimeout.toMillis()),
					transition);
		}
		return value;
	}

	private <T> @Nullable T runThroughTemplate(String transition, RedisScript<T> script, byte[] key, Predicate<T> wrote,
			byte[][] args) {
		byte[][] keysAndArgs = new byte[args.length + 1][];
		keysAndArgs[0] = key;
		System.arraycopy(args, 0, keysAndArgs, 1, args.length);
		// The connection itself, not a close-suppressing proxy made per call: the
		// callback never closes it (a proxy per store call was an eighth of the store's
		// CPU on a light endpoint, JFR).
		return this.redis.execute((RedisCallback<@Nullable T>) (connection) -> {
			T value = eval(connection, script, keysAndArgs);
			if (value != null && this.replicasToAck > 0 && wrote.test(value)) {
				awaitReplicas(connection, key, transition);
			}
			return value;
		}, true);
	}

	@SuppressWarnings("unchecked")
	private static <T> @Nullable T eval(RedisConnection connection, RedisScript<T> script, byte[][] keysAndArgs) {
		ReturnType returnType = ReturnType.fromJavaType(script.getResultType());
		try {
			return (T) connection.scriptingCommands().evalSha(script.getSha1(), returnType, 1, keysAndArgs);
		}
		catch (DataAccessException ex) {
			if (!isNoScript(ex)) {
				throw ex;
			}
			// not in this server's script cache (first use, restart, failover, SCRIPT
			// FLUSH): EVAL runs it and caches it, so the next call goes by SHA again
			return (T) connection.scriptingCommands()
				.eval(bytes(script.getScriptAsString()), returnType, 1, keysAndArgs);
		}
	}

	private static boolean isNoScript(Throwable ex) {
		for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
			if (cause.getMessage() != null && cause.getMessage().contains("NOSCRIPT")) {
				return true;
			}
		}
		return false;
	}

	private void awaitReplicas(RedisConnection connection, byte[] key, String transition) {
		long timeoutMillis = this.replicasAckTimeout.toMillis();
		long acknowledged;
		if (LETTUCE_PRESENT && LettuceCommands.supports(connection)) {
			acknowledged = LettuceCommands.await(connection.getNativeConnection(), key, this.replicasToAck,
					timeoutMillis);
		}
		else {
			// other clients: the connection the script ran on
			Object reply = connection.execute("WAIT", bytes(Integer.toString(this.replicasToAck)),
					bytes(Long.toString(timeoutMillis)));
			if (reply instanceof Long count) {
				acknowledged = count;
			}
			else if (reply instanceof byte[] text) {
				acknowledged = Long.parseLong(string(text));
			}
			else {
				throw new IllegalStateException("Redis answered WAIT with " + reply);
			}
		}
		checkReplicas(acknowledged, transition);
	}

	private void checkReplicas(long acknowledged, String transition) {
		if (acknowledged < this.replicasToAck) {
			throw new NotReplicatedException("Redis idempotency store: " + transition + " reached " + acknowledged
					+ " of " + this.replicasToAck + " replicas within " + this.replicasAckTimeout);
		}
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

	/**
	 * For transitions not worth a wait for replicas: a lost release or heartbeat leaves a
	 * record in flight for at most a lease (see docs/redis-store.md); find writes
	 * nothing.
	 */
	private static <T> Predicate<T> noWait() {
		return (result) -> false;
	}

	static byte[] bytes(String value) {
		return value.getBytes(StandardCharsets.UTF_8);
	}

	static String string(byte[] value) {
		return new String(value, StandardCharsets.UTF_8);
	}

	/**
	 * The configuration of a {@link RedisIdempotencyStore}, checked by {@link #build()}.
	 *
	 * @since 0.2.0
	 */
	public static final class Builder {

		private final RedisConnectionFactory connectionFactory;

		private final String keyPrefix;

		private int replicasToAck;

		private Duration replicasAckTimeout = Duration.ofMillis(500);

		private Builder(RedisConnectionFactory connectionFactory, String keyPrefix) {
			this.connectionFactory = Objects.requireNonNull(connectionFactory, "connectionFactory");
			this.keyPrefix = Objects.requireNonNull(keyPrefix, "keyPrefix");
		}

		/**
		 * Replicas that must acknowledge ({@code WAIT}) a reservation the store acquired,
		 * a completion and a response it recorded ({@link #recordCompleted}); 0, the
		 * default, for none.
		 */
		public Builder replicasToAck(int replicasToAck) {
			this.replicasToAck = replicasToAck;
			return this;
		}

		/**
		 * How long to wait for the replicas; a transition they did not all acknowledge in
		 * time fails with {@link IdempotencyStoreException}. 500 ms by default.
		 */
		public Builder replicasAckTimeout(Duration replicasAckTimeout) {
			this.replicasAckTimeout = Objects.requireNonNull(replicasAckTimeout, "replicasAckTimeout");
			return this;
		}

		/**
		 * The store.
		 * @throws IllegalArgumentException for a key prefix with a brace, a negative
		 * number of replicas, or replicas to wait for without a positive timeout
		 */
		public RedisIdempotencyStore build() {
			if (this.keyPrefix.indexOf('{') >= 0 || this.keyPrefix.indexOf('}') >= 0) {
				// Redis Cluster hashes the first {...} of a key: braces in the prefix
				// would
				// put every record in one slot
				throw new IllegalArgumentException("key prefix must not contain '{' or '}': " + this.keyPrefix);
			}
			if (this.replicasToAck < 0) {
				throw new IllegalArgumentException(
						"replicas to acknowledge must not be negative: " + this.replicasToAck);
			}
			if (this.replicasToAck > 0 && (this.replicasAckTimeout.isNegative() || this.replicasAckTimeout.isZero())) {
				// WAIT with a timeout of 0 blocks forever
				throw new IllegalArgumentException(
						"the replicas' acknowledgement timeout must be positive, was " + this.replicasAckTimeout);
			}
			return new RedisIdempotencyStore(this);
		}

	}

}
