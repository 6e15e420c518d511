package dev.idempotency.store.redis;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.Function;
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

	private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);

	/** Copied for each key: cloning skips the provider look-up of {@code getInstance}. */
	private static final MessageDigest SHA256 = newSha256();

	private final String keyPrefix;

	private final byte[] keyPrefixBytes;

	private final RedisScripts scripts = new RedisScripts();

	private final int replicasToAck;

	private final Duration replicasAckTimeout;

	/** The smallest body stored deflated, in bytes ({@link Builder#deflateFrom}). */
	private final int deflateFrom;

	RedisIdempotencyStore(Builder builder) {
		this.keyPrefix = builder.keyPrefix;
		this.deflateFrom = builder.deflateFrom;
		this.keyPrefixBytes = bytes(builder.keyPrefix);
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
		@SuppressWarnings("rawtypes")
		List result;
		try {
			result = call(reserveTransition(request));
		}
		catch (NotReplicatedException notReplicated) {
			// as in reserveAsync: give the reservation back
			try {
				release(id, request.ownerToken());
			}
			catch (RuntimeException releaseFailure) {
				notReplicated.addSuppressed(releaseFailure);
			}
			throw notReplicated;
		}
		return RedisReplies.toReserveResult(id, result);
	}

	/**
	 * {@link #reserve} through Lettuce's asynchronous commands: the caller's thread only
	 * sends the script (see {@link #isBlocking()} for where {@code executor} serves).
	 * @since 0.1.0
	 */
	@Override
	public CompletionStage<ReserveResult> reserveAsync(ReserveRequest request, Executor executor) {
		RecordId id = request.id();
		if (this.replicasToAck == 0) {
			// nothing is waited for, so no reservation is left unreplicated
			return run(reserveTransition(request), executor, (result) -> RedisReplies.toReserveResult(id, result));
		}
		return run(reserveTransition(request), executor, Function.identity()).handle((result, failure) -> {
			if (failure == null) {
				return CompletableFuture.completedFuture(RedisReplies.toReserveResult(id, result));
			}
			Throwable cause = (failure instanceof CompletionException && failure.getCause() != null)
					? failure.getCause() : failure;
			if (!(cause instanceof NotReplicatedException notReplicated)) {
				return CompletableFuture.<ReserveResult>failedFuture(cause);
			}
			// the reservation is on the primary only: give it back rather than leave it
			// in flight under a token whose request is answered with an error
			return releaseAsync(id, request.ownerToken(), executor).handle((released, releaseFailure) -> {
				if (releaseFailure != null) {
					notReplicated.addSuppressed(
							(releaseFailure instanceof CompletionException && releaseFailure.getCause() != null)
									? releaseFailure.getCause() : releaseFailure);
				}
				return CompletableFuture.<ReserveResult>failedFuture(notReplicated);
			}).thenCompose(Function.identity());
		}).thenCompose(Function.identity());
	}

	@SuppressWarnings("rawtypes")
	private Transition<List> reserveTransition(ReserveRequest request) {
		RecordId id = request.id();
		byte[] scope = bytes(id.scope());
		byte[] key = bytes(id.key());
		return new Transition<>("reserve", this.scripts.reserve, key(scope, key), RedisReplies::reservedHere,
				bytes(request.fingerprint()), bytes(request.operation()), bytes(request.ownerToken()),
				millis(request.lease()), millis(request.retention()), scope, key);
	}

	@Override
	public boolean complete(RecordId id, String ownerToken, StoredResponse response) {
		return RedisReplies.done(call(completeTransition(id, ownerToken, response)));
	}

	/**
	 * {@link #complete} through Lettuce's asynchronous commands, as
	 * {@link #reserveAsync}.
	 * @since 0.1.0
	 */
	@Override
	public CompletionStage<Boolean> completeAsync(RecordId id, String ownerToken, StoredResponse response,
			Executor executor) {
		return run(completeTransition(id, ownerToken, response), executor, RedisReplies::done);
	}

	private Transition<Long> completeTransition(RecordId id, String ownerToken, StoredResponse response) {
		return new Transition<>("complete", this.scripts.complete, redisKey(id), (done) -> done == 1L,
				bytes(ownerToken), StoredResponseCodec.encode(response, this.deflateFrom));
	}

	@Override
	public boolean release(RecordId id, String ownerToken) {
		return RedisReplies.done(call(releaseTransition(id, ownerToken)));
	}

	/**
	 * {@link #release} through Lettuce's asynchronous commands, as {@link #reserveAsync}.
	 * @since 0.1.0
	 */
	@Override
	public CompletionStage<Boolean> releaseAsync(RecordId id, String ownerToken, Executor executor) {
		return run(releaseTransition(id, ownerToken), executor, RedisReplies::done);
	}

	private Transition<Long> releaseTransition(RecordId id, String ownerToken) {
		return new Transition<>("release", this.scripts.release, redisKey(id), noWait(), bytes(ownerToken));
	}

	@Override
	public boolean heartbeat(RecordId id, String ownerToken, Duration lease) {
		Transition<Long> heartbeat = new Transition<>("heartbeat", this.scripts.heartbeat, redisKey(id), noWait(),
				bytes(ownerToken), millis(lease));
		return RedisReplies.done(call(heartbeat));
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
		return RedisReplies.toRecordedResult(request.id(), call(recordCompletedTransition(request)));
	}

	/**
	 * {@link #recordCompleted} through Lettuce's asynchronous commands, as
	 * {@link #reserveAsync}.
	 * @since 0.1.0
	 */
	@Override
	public CompletionStage<Optional<IdempotencyRecord>> recordCompletedAsync(CompletedRecordRequest request,
			Executor executor) {
		RecordId id = request.id();
		return run(recordCompletedTransition(request), executor, (result) -> RedisReplies.toRecordedResult(id, result));
	}

	@SuppressWarnings("rawtypes")
	private Transition<List> recordCompletedTransition(CompletedRecordRequest request) {
		RecordId id = request.id();
		byte[] scope = bytes(id.scope());
		byte[] key = bytes(id.key());
		return new Transition<>("record a completed response", this.scripts.recordCompleted, key(scope, key),
				RedisReplies::recordedHere, bytes(request.fingerprint()), bytes(request.operation()),
				StoredResponseCodec.encode(request.response(), this.deflateFrom), millis(request.retention()), scope,
				key);
	}

	@Override
	public Optional<IdempotencyRecord> find(RecordId id) {
		return RedisReplies.toFound(id, call(new Transition<>("find", this.scripts.find, redisKey(id), noWait())));
	}

	/**
	 * {@link #find} through Lettuce's asynchronous commands, as {@link #reserveAsync}.
	 * @since 0.1.0
	 */
	@Override
	public CompletionStage<Optional<IdempotencyRecord>> findAsync(RecordId id, Executor executor) {
		return run(new Transition<>("find", this.scripts.find, redisKey(id), noWait()), executor,
				(fields) -> RedisReplies.toFound(id, fields));
	}

	/**
	 * Whether a call may block its caller: not with a {@code LettuceConnectionFactory}
	 * that shares its native connection, whose {@code *Async} methods only send the
	 * command (the engine's whole run, its finishing steps included, goes through them on
	 * a reactive door); with any other factory the store goes through a
	 * {@code RedisTemplate}, whose {@code *Async} methods run the blocking call on the
	 * executor given.
	 */
	@Override
	public boolean isBlocking() {
		return this.lettuce == null;
	}

	/**
	 * The record with its {@code created_ms} and {@code owner} fields, from {@code find}.
	 */
	@Override
	public Optional<InspectedRecord> inspect(RecordId id) {
		List<?> flat = call(new Transition<>("inspect", this.scripts.find, redisKey(id), noWait()));
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
		return RedisReplies.done(call(new Transition<>("remove", this.scripts.remove, redisKey(id), noWait())));
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
		return string(redisKey(id));
	}

	private byte[] redisKey(RecordId id) {
		return key(bytes(id.scope()), bytes(id.key()));
	}

	/**
	 * {@link #key(RecordId)} in UTF-8, written into one array: the prefix's bytes are
	 * encoded once, the digest is a copy of a prototype (no provider look-up per call)
	 * and the hex digits go straight into the key.
	 */
	private byte[] key(byte[] scope, byte[] key) {
		MessageDigest sha256 = sha256();
		sha256.update((byte) (scope.length >>> 24));
		sha256.update((byte) (scope.length >>> 16));
		sha256.update((byte) (scope.length >>> 8));
		sha256.update((byte) scope.length);
		sha256.update(scope);
		sha256.update(key);
		byte[] digest = sha256.digest();
		byte[] prefix = this.keyPrefixBytes;
		byte[] redisKey = new byte[prefix.length + 2 + 2 * digest.length];
		System.arraycopy(prefix, 0, redisKey, 0, prefix.length);
		int at = prefix.length;
		redisKey[at++] = '{';
		for (byte b : digest) {
			redisKey[at++] = HEX[(b >>> 4) & 0xf];
			redisKey[at++] = HEX[b & 0xf];
		}
		redisKey[at] = '}';
		return redisKey;
	}

	/**
	 * One transition: a script, the record whose key it runs on, its arguments, and
	 * whether a reply says it wrote something that must reach replicas ({@code wrote}).
	 */
	private record Transition<T>(String name, RedisScript<T> script, byte[] key, Predicate<T> wrote, byte[]... args) {
	}

	/**
	 * Runs one script on the record's key and, when the script wrote something that must
	 * reach replicas ({@code wrote}), {@code WAIT}s for them on the same connection:
	 * {@code WAIT} counts the writes of the connection it is sent on, so it must follow
	 * the script there (in Redis Cluster, on the connection to the primary of the key's
	 * slot). Scripts go by SHA ({@code EVALSHA}) and fall back to {@code EVAL} on
	 * {@code NOSCRIPT}. The path of every transition that does not block (and, through
	 * the template, of every blocking one; see {@link #call} for the others): through
	 * Lettuce's asynchronous commands on the factory's shared connection when there is
	 * one (the caller's thread only sends; {@code executor} only opens that connection
	 * when it is not open yet), else through the template on {@code executor}. The stage
	 * gives what {@code reply} reads from the script's reply, or fails with an
	 * {@link IdempotencyStoreException}; it never throws.
	 */
	private <T, U> CompletableFuture<U> run(Transition<T> transition, Executor executor,
			Function<? super T, ? extends U> reply) {
		byte[] key = transition.key();
		LettuceCommands lettuce = this.lettuce;
		CompletableFuture<@Nullable T> result;
		if (lettuce != null && this.replicasToAck == 0) {
			// The usual path: the script's stage, which fails with the store's exception
			// already, and one stage that reads its reply.
			return lettuce.evalAsync(transition.name(), transition.script(), key, transition.args(), executor)
				.thenApply((value) -> {
					if (value == null) {
						throw new IdempotencyStoreException("Redis returned no result for " + transition.name());
					}
					return reply.apply(value);
				});
		}
		if (lettuce != null) {
			result = lettuce.evalAsync(transition.name(), transition.script(), key, transition.args(), executor)
				.thenCompose((value) -> {
					// replicas-to-ack is set: calls without it took the branch above
					if (value == null || !transition.wrote().test(value)) {
						return CompletableFuture.completedFuture(value);
					}
					return lettuce
						.awaitReplicasAsync(key, this.replicasToAck, this.replicasAckTimeout.toMillis(), executor)
						.thenCompose((acknowledged) -> replicated(acknowledged, transition.name(), value));
				});
		}
		else {
			try {
				result = CompletableFuture.supplyAsync(() -> runThroughTemplate(transition, key), executor);
			}
			catch (RuntimeException ex) {
				// an executor that refuses the task
				result = CompletableFuture.failedFuture(ex);
			}
		}
		return result.handle((value, failure) -> {
			if (failure != null) {
				Throwable cause = (failure instanceof CompletionException && failure.getCause() != null)
						? failure.getCause() : failure;
				return CompletableFuture
					.<T>failedFuture((cause instanceof IdempotencyStoreException || cause instanceof Error) ? cause
							: new IdempotencyStoreException("Redis idempotency store failed to " + transition.name(),
									cause));
			}
			if (value == null) {
				return CompletableFuture.<T>failedFuture(
						new IdempotencyStoreException("Redis returned no result for " + transition.name()));
			}
			return CompletableFuture.completedFuture(value);
		}).thenCompose(Function.identity()).thenApply(reply);
	}

	/**
	 * {@link #run} for a caller that waits (the blocking methods): with the shared
	 * Lettuce connection the script, and {@code WAIT} when it wrote something that must
	 * reach replicas, go on the same connection as in {@link #run}, but the caller's
	 * thread waits for each command itself (see {@link LettuceCommands#eval}) instead of
	 * for a chain of stages; with any other factory {@link #run} on the caller's thread,
	 * awaited. Throws an {@link IdempotencyStoreException}.
	 */
	private <T> T call(Transition<T> transition) {
		LettuceCommands lettuce = this.lettuce;
		if (lettuce == null) {
			return LettuceCommands.join(run(transition, LettuceCommands.DIRECT, Function.identity()),
					transition.name());
		}
		T value = lettuce.eval(transition.name(), transition.script(), transition.key(), transition.args());
		if (value == null) {
			throw new IdempotencyStoreException("Redis returned no result for " + transition.name());
		}
		if (this.replicasToAck > 0 && transition.wrote().test(value)) {
			checkReplicas(
					LettuceCommands.join(lettuce.awaitReplicasAsync(transition.key(), this.replicasToAck,
							this.replicasAckTimeout.toMillis(), LettuceCommands.DIRECT), transition.name()),
					transition.name());
		}
		return value;
	}

	private <T> @Nullable T runThroughTemplate(Transition<T> transition, byte[] key) {
		byte[][] args = transition.args();
		byte[][] keysAndArgs = new byte[args.length + 1][];
		keysAndArgs[0] = key;
		System.arraycopy(args, 0, keysAndArgs, 1, args.length);
		// The connection itself, not a close-suppressing proxy made per call: the
		// callback never closes it (a proxy per store call was an eighth of the store's
		// CPU on a light endpoint, JFR).
		return this.redis.execute((RedisCallback<@Nullable T>) (connection) -> {
			T value = eval(connection, transition.script(), keysAndArgs);
			if (value != null && this.replicasToAck > 0 && transition.wrote().test(value)) {
				checkReplicas(awaitReplicas(connection, key), transition.name());
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

	private long awaitReplicas(RedisConnection connection, byte[] key) {
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
		return acknowledged;
	}

	private <T> CompletableFuture<T> replicated(long acknowledged, String transition, T value) {
		try {
			checkReplicas(acknowledged, transition);
			return CompletableFuture.completedFuture(value);
		}
		catch (NotReplicatedException ex) {
			return CompletableFuture.failedFuture(ex);
		}
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
			return (MessageDigest) SHA256.clone();
		}
		catch (CloneNotSupportedException ex) {
			return newSha256();
		}
	}

	private static MessageDigest newSha256() {
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

		private int deflateFrom = StoredResponseCodec.NEVER_DEFLATE;

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
		 * The smallest answer body kept deflated, in bytes, when deflating makes it
		 * smaller; {@link StoredResponseCodec#NEVER_DEFLATE}: every body as it is. By
		 * default {@link StoredResponseCodec#NEVER_DEFLATE} (bodies kept as they are).
		 * @since 0.2.0
		 */
		public Builder deflateFrom(int deflateFrom) {
			this.deflateFrom = StoredResponseCodec.checkDeflateFrom(deflateFrom);
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
