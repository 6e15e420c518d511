package dev.idempotency.store.redis;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;
import java.util.function.Supplier;

import dev.idempotency.store.IdempotencyStoreException;
import io.netty.util.HashedWheelTimer;
import io.netty.util.Timeout;
import io.netty.util.TimerTask;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.lettuce.core.RedisChannelHandler;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.lettuce.core.RedisFuture;
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
 * it). One attempt at a time opens it, outside any lock, and every caller that finds it
 * not open waits for that attempt at most the command timeout: with Redis unreachable,
 * concurrent calls fail together in about the timeout instead of one after another, each
 * after a handshake of its own; an attempt that failed is forgotten, so the next call
 * tries again. Routing is the factory's own: the same connection, so standalone,
 * Sentinel, static primary/replica and Cluster send each script where Spring Data Redis
 * would. Timeouts are the factory's command timeout, as for its own calls. Only loaded
 * when Lettuce is on the class path.
 */
final class LettuceCommands {

	/**
	 * Times each command and each wait for the connection to open: one daemon thread, its
	 * tasks added and cancelled without a lock.
	 */
	private static final HashedWheelTimer TIMEOUTS = new HashedWheelTimer(
			new DefaultThreadFactory("idempotency-redis-timeouts", true), 10, TimeUnit.MILLISECONDS);

	/**
	 * Runs a task on the caller's thread: what the blocking path passes. The connection
	 * is then opened on a thread of its own, so that every caller waits for it at most
	 * the command timeout.
	 */
	static final Executor DIRECT = Runnable::run;

	private final LettuceConnectionFactory factory;

	private final long timeoutMillis;

	private volatile @Nullable RedisClusterAsyncCommands<byte[], byte[]> commands;

	/**
	 * The one attempt to open the shared connection under way, if any: every caller that
	 * finds the connection not open waits for it (each at most the command timeout), and
	 * it removes itself when it ends, so that after a failure the next caller starts
	 * another.
	 */
	private final AtomicReference<@Nullable CompletableFuture<RedisClusterAsyncCommands<byte[], byte[]>>> opening = new AtomicReference<>();

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
	 * Sends {@code script} on {@code key} by digest, then by source if the server answers
	 * {@code NOSCRIPT}, without waiting: the stage completes with the reply, or fails
	 * with an {@link IdempotencyStoreException} (never thrown) when Redis or the
	 * connection fails, the client refuses the call, or a command has no reply within the
	 * command timeout. Only when the shared connection is not open yet (first call, after
	 * the factory reset it) is it opened, by one attempt shared with the other callers,
	 * on {@code opener} if this call begins it: opening blocks. The wait for it is
	 * bounded by the command timeout too.
	 */
	<T> CompletableFuture<@Nullable T> evalAsync(String transition, RedisScript<T> script, byte[] key, byte[][] args,
			Executor opener) {
		RedisClusterAsyncCommands<byte[], byte[]> open = this.commands;
		if (open != null && !closedForGood(open)) {
			// Every call once the connection is open: the script is sent now.
			return new Eval<>(open, transition, script, key, args).send();
		}
		return storeFailure(
				commandsAsync(opener)
					.thenCompose((commands) -> new Eval<>(commands, transition, script, key, args).send()),
				"Redis idempotency store failed to " + transition);
	}

	/**
	 * One script sent without waiting, by digest, then by source if the server answers
	 * {@code NOSCRIPT}: itself the stage of its reply, completed on the thread that
	 * completes the command (Lettuce's event loop), failed with an
	 * {@link IdempotencyStoreException} when the client refuses the command, Redis fails
	 * it, or no reply comes within the command timeout (the command is then cancelled, as
	 * {@code LettuceFutures.awaitOrCancel} does). One object does what a chain of stages
	 * did (a reply stage, a timer stage, a fallback stage and a failure stage for each
	 * call): the store's part of a keyed request on a reactive door.
	 */
	private final class Eval<T> extends CompletableFuture<@Nullable T>
			implements BiConsumer<@Nullable Object, @Nullable Throwable>, TimerTask {

		private final RedisClusterAsyncCommands<byte[], byte[]> commands;

		private final String transition;

		private final RedisScript<T> script;

		private final byte[][] keys;

		private final byte[][] args;

		/** The command under way: the digest's, then the source's. */
		private volatile @Nullable RedisFuture<?> command;

		private volatile @Nullable Timeout timeout;

		private volatile boolean bySource;

		Eval(RedisClusterAsyncCommands<byte[], byte[]> commands, String transition, RedisScript<T> script, byte[] key,
				byte[][] args) {
			this.commands = commands;
			this.transition = transition;
			this.script = script;
			this.keys = new byte[][] { key };
			this.args = args;
		}

		CompletableFuture<@Nullable T> send() {
			RedisFuture<?> sent;
			try {
				ScriptOutputType type = outputType(this.script);
				sent = this.bySource
						? this.commands.eval(this.script.getScriptAsString().getBytes(StandardCharsets.UTF_8), type,
								this.keys, this.args)
						: this.commands.evalsha(this.script.getSha1(), type, this.keys, this.args);
			}
			catch (RuntimeException ex) {
				// refused by the client, such as a stopped factory
				fail(ex);
				return this;
			}
			this.command = sent;
			// timed before the reply is listened to, so that the reply cancels the timer
			this.timeout = sent.isDone() ? null
					: TIMEOUTS.newTimeout(this, LettuceCommands.this.timeoutMillis, TimeUnit.MILLISECONDS);
			sent.whenComplete(this);
			return this;
		}

		/** The command's reply or failure. */
		@Override
		public void accept(@Nullable Object value, @Nullable Throwable failure) {
			Timeout timer = this.timeout;
			if (timer != null) {
				timer.cancel();
			}
			if (failure == null) {
				@SuppressWarnings("unchecked")
				T typed = (T) value;
				complete(typed);
			}
			else if (!this.bySource && isNoScript(failure)) {
				// not in this server's script cache (first use, restart, failover, SCRIPT
				// FLUSH): EVAL runs it and caches it, so the next call goes by digest
				// again
				this.bySource = true;
				send();
			}
			else {
				fail(failure);
			}
		}

		/** No reply within the command timeout. */
		@Override
		public void run(Timeout expired) {
			RedisFuture<?> sent = this.command;
			if (fail(commandTimedOut(LettuceCommands.this.timeoutMillis)) && sent != null) {
				sent.cancel(true);
			}
		}

		private boolean fail(Throwable failure) {
			return completeExceptionally(
					asStoreFailure(failure, "Redis idempotency store failed to " + this.transition));
		}

	}

	/**
	 * {@link #evalAsync} for a caller that waits, awaited on its own thread: the command
	 * itself is waited for, at most the command timeout (then cancelled, as
	 * {@code LettuceFutures.awaitOrCancel} does), with no timer task and no chain of
	 * stages. The reply, or an {@link IdempotencyStoreException} thrown as {@link #join}
	 * throws it. A connection that is not open yet is opened as for {@link #DIRECT}: on a
	 * thread of its own, waited for at most the command timeout.
	 */
	<T> @Nullable T eval(String transition, RedisScript<T> script, byte[] key, byte[][] args) {
		RedisClusterAsyncCommands<byte[], byte[]> commands = this.commands;
		if (commands == null || closedForGood(commands)) {
			commands = join(storeFailure(commandsAsync(DIRECT), "Redis idempotency store failed to " + transition),
					transition);
		}
		byte[][] keys = { key };
		ScriptOutputType type = outputType(script);
		try {
			try {
				return await(commands.evalsha(script.getSha1(), type, keys, args));
			}
			catch (ExecutionException ex) {
				if (!isNoScript(ex)) {
					throw ex;
				}
				// not in this server's script cache: as in evalAsync
				return await(
						commands.eval(script.getScriptAsString().getBytes(StandardCharsets.UTF_8), type, keys, args));
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IdempotencyStoreException("interrupted while the Redis idempotency store was to " + transition,
					ex);
		}
		catch (ExecutionException | RuntimeException ex) {
			throw failure(ex, transition);
		}
	}

	/**
	 * The reply of a command sent, waited for at most the command timeout; a command
	 * without a reply by then is cancelled and fails with a
	 * {@link RedisCommandTimeoutException}, as in {@link #within}.
	 */
	private <T> @Nullable T await(RedisFuture<?> command) throws InterruptedException, ExecutionException {
		try {
			if (!command.await(this.timeoutMillis, TimeUnit.MILLISECONDS)) {
				command.cancel(true);
				throw new RedisCommandTimeoutException("Command timed out after " + this.timeoutMillis + " ms");
			}
		}
		catch (InterruptedException ex) {
			command.cancel(true);
			throw ex;
		}
		@SuppressWarnings("unchecked")
		T value = (T) command.get();
		return value;
	}

	/**
	 * {@code WAIT} on the connection the scripts go through, without waiting; see
	 * {@link #awaitReplicasAsync(Object, byte[], int, long)}. Called after a script, so
	 * the connection is open: {@code opener} is only for a connection the factory reset
	 * in between.
	 */
	CompletableFuture<Long> awaitReplicasAsync(byte[] key, int replicas, long waitMillis, Executor opener) {
		return storeFailure(
				commandsAsync(opener)
					.thenCompose((commands) -> awaitReplicasAsync(commands, key, replicas, waitMillis)),
				"Redis WAIT for replicas failed");
	}

	/**
	 * The commands of the shared connection: at once when it is open, else when the one
	 * attempt to open it (begun by this caller or an earlier one) has opened it. A new
	 * attempt runs on {@code opener}, or on a thread of its own for {@link #DIRECT} (a
	 * blocking caller, or a stage completed on one of Lettuce's threads: opening there
	 * would wait for that thread itself). The stage fails when the attempt fails, or when
	 * it has not opened the connection within the command timeout; the attempt then goes
	 * on, bounded by the client's own connect and handshake timeouts, for the callers
	 * after this one.
	 */
	private CompletableFuture<RedisClusterAsyncCommands<byte[], byte[]>> commandsAsync(Executor opener) {
		RedisClusterAsyncCommands<byte[], byte[]> current = this.commands;
		if (current != null && !closedForGood(current)) {
			return CompletableFuture.completedFuture(current);
		}
		CompletableFuture<RedisClusterAsyncCommands<byte[], byte[]>> attempt = this.opening.get();
		if (attempt == null) {
			CompletableFuture<RedisClusterAsyncCommands<byte[], byte[]>> fresh = new CompletableFuture<>();
			if (this.opening.compareAndSet(null, fresh)) {
				open(fresh, opener);
				attempt = fresh;
			}
			else {
				attempt = this.opening.get();
				if (attempt == null) {
					// the other attempt has just ended: its result, if any, is in place
					return commandsAsync(opener);
				}
			}
		}
		long timeoutMillis = this.timeoutMillis;
		return failAfter(attempt.copy(), timeoutMillis,
				() -> new IdempotencyStoreException("Redis connection not opened within the command timeout ("
						+ timeoutMillis + " ms); a later call uses it once it is open or tries again"),
				() -> {
				})
			.exceptionallyCompose((failure) -> CompletableFuture.failedFuture(unwrap(failure)));
	}

	/**
	 * Opens the shared connection into {@code attempt} on {@code opener}, outside any
	 * lock; when the attempt ends it is no longer the one under way.
	 */
	private void open(CompletableFuture<RedisClusterAsyncCommands<byte[], byte[]>> attempt, Executor opener) {
		Runnable task = () -> {
			try {
				attempt.complete(openNow());
			}
			catch (Throwable ex) {
				attempt.completeExceptionally(ex);
			}
		};
		attempt.whenComplete((opened, failure) -> {
			if (opened != null) {
				this.commands = opened;
			}
			this.opening.compareAndSet(attempt, null);
		});
		try {
			if (opener == DIRECT) {
				Thread thread = new Thread(task, "idempotency-redis-open");
				thread.setDaemon(true);
				thread.start();
			}
			else {
				opener.execute(task);
			}
		}
		catch (RuntimeException | OutOfMemoryError ex) {
			// an executor that refuses the task (shut down, saturated), or no thread
			attempt.completeExceptionally(ex);
		}
	}

	/**
	 * {@code reply}, failed with a {@link RedisCommandTimeoutException} if it has not
	 * completed within {@code timeoutMillis}; {@code command} is then cancelled.
	 */
	private static <T extends @Nullable Object> CompletableFuture<T> within(CompletableFuture<T> reply,
			long timeoutMillis, Future<?> command) {
		return failAfter(reply, timeoutMillis, () -> commandTimedOut(timeoutMillis), () -> command.cancel(true));
	}

	/** What a command with no reply within the command timeout fails with. */
	private static RedisCommandTimeoutException commandTimedOut(long timeoutMillis) {
		return new RedisCommandTimeoutException("Command timed out after " + timeoutMillis + " ms");
	}

	/**
	 * {@code stage}, failed with {@code timedOut} unless it completes within
	 * {@code timeoutMillis}, then {@code onTimeout} run. Timed by Netty's wheel timer,
	 * not {@code CompletableFuture.orTimeout}: the JDK's delay scheduler takes a lock to
	 * cancel its task when the stage completes, and the stage completes on Lettuce's
	 * event loop, which must never wait for a lock.
	 */
	private static <T extends @Nullable Object> CompletableFuture<T> failAfter(CompletableFuture<T> stage,
			long timeoutMillis, Supplier<Throwable> timedOut, Runnable onTimeout) {
		if (stage.isDone()) {
			return stage;
		}
		Timeout timeout = TIMEOUTS.newTimeout((expired) -> {
			if (stage.completeExceptionally(timedOut.get())) {
				onTimeout.run();
			}
		}, timeoutMillis, TimeUnit.MILLISECONDS);
		stage.whenComplete((value, failure) -> timeout.cancel());
		return stage;
	}

	private static boolean isNoScript(Throwable failure) {
		Throwable cause = unwrap(failure);
		return cause instanceof RedisNoScriptException || (cause instanceof RedisCommandExecutionException
				&& String.valueOf(cause.getMessage()).startsWith("NOSCRIPT"));
	}

	/**
	 * A stage that fails with an {@link IdempotencyStoreException}: the one it failed
	 * with, or one with {@code message} caused by whatever else it failed with.
	 */
	private static <T extends @Nullable Object> CompletableFuture<T> storeFailure(CompletableFuture<T> stage,
			String message) {
		return stage
			.exceptionallyCompose((failure) -> CompletableFuture.failedFuture(asStoreFailure(failure, message)));
	}

	/**
	 * {@code failure} as the store's: the store's own failure as it is, else an
	 * {@link IdempotencyStoreException} with {@code message} caused by it.
	 */
	private static IdempotencyStoreException asStoreFailure(Throwable failure, String message) {
		Throwable cause = unwrap(failure);
		return (cause instanceof IdempotencyStoreException storeFailure) ? storeFailure
				: new IdempotencyStoreException(message, cause);
	}

	private static Throwable unwrap(Throwable failure) {
		Throwable cause = failure;
		while ((cause instanceof CompletionException || cause instanceof ExecutionException)
				&& cause.getCause() != null) {
			cause = cause.getCause();
		}
		return cause;
	}

	/**
	 * Waits for a stage of the store, which fails with an
	 * {@link IdempotencyStoreException} and is bounded by the command timeout: its value,
	 * or the exception it failed with thrown (any other than a store failure wrapped in
	 * one, as the store failed to {@code what}).
	 */
	static <T> T join(CompletionStage<T> stage, String what) {
		CompletableFuture<T> future = stage.toCompletableFuture();
		try {
			return future.get();
		}
		catch (InterruptedException ex) {
			future.cancel(true);
			Thread.currentThread().interrupt();
			throw new IdempotencyStoreException("interrupted while the Redis idempotency store was to " + what, ex);
		}
		catch (ExecutionException ex) {
			throw failure(ex, what);
		}
	}

	/**
	 * What a store call that failed with {@code failure} throws: the store's own failure
	 * as it is, else an {@link IdempotencyStoreException} of its cause.
	 * @throws Error an error that caused it, as it is
	 */
	private static IdempotencyStoreException failure(Throwable failure, String what) {
		if (unwrap(failure) instanceof Error error) {
			throw error;
		}
		return asStoreFailure(failure, "Redis idempotency store failed to " + what);
	}

	/**
	 * Opens the shared connection, blocking: only ever one at a time, as the one attempt
	 * under way ({@link #opening}).
	 */
	private RedisClusterAsyncCommands<byte[], byte[]> openNow() {
		// the wrapper only lends the shared connection: closing it leaves that open
		try (RedisConnection connection = this.factory.getConnection()) {
			return nativeCommands(connection.getNativeConnection());
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
	 * command for it, awaited; see
	 * {@link #awaitReplicasAsync(Object, byte[], int, long)}.
	 */
	static long await(Object nativeConnection, byte[] key, int replicas, long waitMillis) {
		return join(awaitReplicasAsync(nativeConnection, key, replicas, waitMillis), "wait for replicas");
	}

	/**
	 * {@code WAIT} through Lettuce's native commands, without waiting. Standalone and
	 * Sentinel: the connection the script ran on. Cluster: the connection to the primary
	 * that serves the key's slot, which is the one Lettuce routed the script through
	 * (both are Lettuce's write connection to that host and port). The stage fails with
	 * an {@link IdempotencyStoreException}, also when no reply comes within
	 * {@code waitMillis} and a margin for the round trip.
	 */
	@SuppressWarnings("unchecked")
	static CompletableFuture<Long> awaitReplicasAsync(Object nativeConnection, byte[] key, int replicas,
			long waitMillis) {
		CompletableFuture<Long> acknowledged;
		try {
			BaseRedisAsyncCommands<byte[], byte[]> target;
			if (nativeConnection instanceof RedisAdvancedClusterAsyncCommands<?, ?> cluster) {
				RedisAdvancedClusterAsyncCommands<byte[], byte[]> commands = (RedisAdvancedClusterAsyncCommands<byte[], byte[]>) cluster;
				RedisClusterNode primary = commands.getStatefulConnection()
					.getPartitions()
					.getMasterBySlot(SlotHash.getSlot(key));
				if (primary == null) {
					throw new IdempotencyStoreException("no Redis Cluster primary known for the slot of a record");
				}
				// Lettuce opens a node's connection on first use, without blocking here:
				// the async variant of getConnection
				acknowledged = commands.getStatefulConnection()
					.getConnectionAsync(primary.getUri().getHost(), primary.getUri().getPort())
					.thenCompose((node) -> waitOn(node.async(), replicas, waitMillis));
			}
			else {
				acknowledged = waitOn((BaseRedisAsyncCommands<byte[], byte[]>) nativeConnection, replicas, waitMillis);
			}
		}
		catch (RuntimeException ex) {
			acknowledged = CompletableFuture.failedFuture(ex);
		}
		return storeFailure(acknowledged, "Redis WAIT for replicas failed");
	}

	private static CompletableFuture<Long> waitOn(BaseRedisAsyncCommands<byte[], byte[]> target, int replicas,
			long waitMillis) {
		RedisFuture<Long> command = target.waitForReplication(replicas, waitMillis);
		// WAIT blocks for at most waitMillis on the server; the margin covers the round
		// trip
		return within(command.toCompletableFuture().thenApply((count) -> (count != null) ? count : 0L),
				waitMillis + 5000, command);
	}

	/** Whether {@link #await} can wait on this Spring Data Redis connection. */
	static boolean supports(RedisConnection connection) {
		return connection.getNativeConnection() instanceof BaseRedisAsyncCommands<?, ?>;
	}

}
