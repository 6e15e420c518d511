package dev.idempotency.store.redis;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;

import dev.idempotency.store.IdempotencyStoreException;
import io.lettuce.core.LettuceFutures;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.async.BaseRedisAsyncCommands;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.async.RedisAdvancedClusterAsyncCommands;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * The store's calls on Lettuce's own commands, over the one native connection that a
 * {@link LettuceConnectionFactory} shares (its default, {@code shareNativeConnection}).
 * Spring Data Redis hands that connection out per call behind a lock and a new
 * {@code LettuceConnection} wrapper; on a light endpoint that hand-out was about a third
 * of the store's CPU (JFR). Here the native commands are taken from the factory once and
 * kept until the connection is closed for good (the factory stopped or reset it; a
 * connection that is only reconnecting after a cut is kept, as Spring Data Redis keeps
 * it). Routing is the factory's own: the same connection, so standalone, Sentinel, static
 * primary/replica and Cluster send each script where Spring Data Redis would. Timeouts
 * are the factory's command timeout, as for its own calls. Only loaded when Lettuce is on
 * the class path.
 */
final class LettuceCommands {

	private final LettuceConnectionFactory factory;

	private final long timeoutMillis;

	private volatile @Nullable RedisClusterAsyncCommands<byte[], byte[]> commands;

	private final ReentrantLock connectionLock = new ReentrantLock();

	private LettuceCommands(LettuceConnectionFactory factory) {
		this.factory = factory;
		this.timeoutMillis = factory.getTimeout();
	}

	/**
	 * The native path for a Lettuce factory that shares its connection, else {@code null}
	 * (the store then goes through Spring Data Redis per call).
	 */
	static @Nullable LettuceCommands of(RedisConnectionFactory factory) {
		if (factory instanceof LettuceConnectionFactory lettuce && lettuce.getShareNativeConnection()) {
			return new LettuceCommands(lettuce);
		}
		return null;
	}

	/**
	 * Runs {@code script} on {@code key} by digest, falling back to its source on
	 * {@code NOSCRIPT}.
	 * @throws IdempotencyStoreException when Redis or the connection fails, the call
	 * times out, or the client refuses it (a factory being stopped): whatever the client
	 * throws is a store failure, answered by the store-failure policy
	 */
	<T> @Nullable T eval(String transition, RedisScript<T> script, byte[] key, byte[][] args) {
		try {
			return eval(script, key, args);
		}
		catch (IdempotencyStoreException ex) {
			throw ex;
		}
		catch (RuntimeException ex) {
			throw new IdempotencyStoreException("Redis idempotency store failed to " + transition, ex);
		}
	}

	@SuppressWarnings("unchecked")
	private <T> @Nullable T eval(RedisScript<T> script, byte[] key, byte[][] args) {
		RedisClusterAsyncCommands<byte[], byte[]> commands = commands();
		byte[][] keys = { key };
		ScriptOutputType type = outputType(script);
		try {
			return (T) LettuceFutures.awaitOrCancel(commands.evalsha(script.getSha1(), type, keys, args),
					this.timeoutMillis, TimeUnit.MILLISECONDS);
		}
		catch (RedisCommandExecutionException ex) {
			if (!(ex instanceof RedisNoScriptException) && !String.valueOf(ex.getMessage()).startsWith("NOSCRIPT")) {
				throw ex;
			}
			// not in this server's script cache (first use, restart, failover, SCRIPT
			// FLUSH): EVAL runs it and caches it, so the next call goes by digest again
			return (T) LettuceFutures.awaitOrCancel(
					commands.eval(script.getScriptAsString().getBytes(StandardCharsets.UTF_8), type, keys, args),
					this.timeoutMillis, TimeUnit.MILLISECONDS);
		}
	}

	/** {@code WAIT} on the connection the scripts go through; see {@link #await}. */
	long awaitReplicas(byte[] key, int replicas, long waitMillis) {
		try {
			return await(commands(), key, replicas, waitMillis);
		}
		catch (IdempotencyStoreException ex) {
			throw ex;
		}
		catch (RuntimeException ex) {
			throw new IdempotencyStoreException("Redis WAIT for replicas failed", ex);
		}
	}

	private RedisClusterAsyncCommands<byte[], byte[]> commands() {
		RedisClusterAsyncCommands<byte[], byte[]> current = this.commands;
		if (current != null && !closedForGood(current)) {
			return current;
		}
		// A lock, not synchronized: opening the connection blocks, and on JDK 21 to 23 a
		// virtual thread blocked inside a monitor pins its carrier.
		this.connectionLock.lock();
		try {
			current = this.commands;
			if (current == null || closedForGood(current)) {
				// the wrapper only lends the shared connection: closing it leaves that
				// open
				try (RedisConnection connection = this.factory.getConnection()) {
					current = nativeCommands(connection.getNativeConnection());
				}
				this.commands = current;
			}
			return current;
		}
		finally {
			this.connectionLock.unlock();
		}
	}

	@SuppressWarnings("unchecked")
	private static RedisClusterAsyncCommands<byte[], byte[]> nativeCommands(Object nativeConnection) {
		if (nativeConnection instanceof RedisClusterAsyncCommands<?, ?> commands) {
			return (RedisClusterAsyncCommands<byte[], byte[]>) commands;
		}
		throw new IdempotencyStoreException("unexpected native Lettuce connection " + nativeConnection.getClass());
	}

	private static boolean closedForGood(RedisClusterAsyncCommands<byte[], byte[]> commands) {
		Object connection = (commands instanceof RedisAdvancedClusterAsyncCommands<byte[], byte[]> cluster)
				? cluster.getStatefulConnection() : (commands instanceof RedisAsyncCommands<byte[], byte[]> standalone)
						? standalone.getStatefulConnection() : null;
		return connection instanceof RedisChannelHandler<?, ?> handler && handler.isClosed();
	}

	private static ScriptOutputType outputType(RedisScript<?> script) {
		Class<?> type = script.getResultType();
		if (type == Long.class) {
			return ScriptOutputType.INTEGER;
		}
		if (type == List.class) {
			return ScriptOutputType.MULTI;
		}
		throw new IllegalArgumentException("no Redis output type for " + type);
	}

	/**
	 * {@code WAIT} through Lettuce's native commands, where Spring Data Redis has no
	 * command for it. Standalone and Sentinel: the connection the script ran on. Cluster:
	 * the connection to the primary that serves the key's slot, which is the one Lettuce
	 * routed the script through (both are Lettuce's write connection to that host and
	 * port).
	 */
	@SuppressWarnings("unchecked")
	static long await(Object nativeConnection, byte[] key, int replicas, long waitMillis) {
		BaseRedisAsyncCommands<byte[], byte[]> target;
		if (nativeConnection instanceof RedisAdvancedClusterAsyncCommands<?, ?> cluster) {
			RedisAdvancedClusterAsyncCommands<byte[], byte[]> commands = (RedisAdvancedClusterAsyncCommands<byte[], byte[]>) cluster;
			RedisClusterNode primary = commands.getStatefulConnection()
				.getPartitions()
				.getMasterBySlot(SlotHash.getSlot(key));
			if (primary == null) {
				throw new IdempotencyStoreException("no Redis Cluster primary known for the slot of a record");
			}
			target = commands.getConnection(primary.getUri().getHost(), primary.getUri().getPort());
		}
		else {
			target = (BaseRedisAsyncCommands<byte[], byte[]>) nativeConnection;
		}
		try {
			// WAIT blocks for at most waitMillis on the server; the margin covers the
			// round trip
			Long acknowledged = target.waitForReplication(replicas, waitMillis)
				.get(waitMillis + 5000, TimeUnit.MILLISECONDS);
			return (acknowledged != null) ? acknowledged : 0;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IdempotencyStoreException("interrupted while waiting for Redis replicas", ex);
		}
		catch (ExecutionException | TimeoutException ex) {
			throw new IdempotencyStoreException("Redis WAIT for replicas failed", ex);
		}
	}

	/** Whether {@link #await} can wait on this Spring Data Redis connection. */
	static boolean supports(RedisConnection connection) {
		return connection.getNativeConnection() instanceof BaseRedisAsyncCommands<?, ?>;
	}

}
