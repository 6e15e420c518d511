package dev.idempotency.core.internal;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import dev.idempotency.core.IdempotencyOutcome;
import dev.idempotency.store.IdempotencyRecord;
import org.jspecify.annotations.Nullable;

/**
 * The look at a key that begins a call, as each mode makes it: one store call (a
 * reservation, or a read), then what its result decides: run, replay, refuse, or, for a
 * run of the same request in flight elsewhere, look again after a poll interval until the
 * in-flight deadline. The mode decides; the engine only drives the looks, blocking
 * ({@link #decide()}: the thread sleeps between two looks) or not ({@link #decideAsync}:
 * the store call through the store's non-blocking variant, the wait a delay that holds no
 * thread). So the protocol is written once for both stacks.
 *
 * @param <R> the result of the store call
 */
abstract class Lookup<R> {

	private final ExistingRecords existingRecords;

	private final Refusals refusals;

	private final IdempotentCall call;

	private final String operation;

	private final Instant deadline;

	/** The call's fingerprint, computed at the first look (the body is read by then). */
	private @Nullable String fingerprint;

	Lookup(ExistingRecords existingRecords, Refusals refusals, IdempotentCall call) {
		this.existingRecords = existingRecords;
		this.refusals = refusals;
		this.call = call;
		this.operation = call.operation();
		this.deadline = existingRecords.inFlightDeadline();
	}

	/**
	 * The fingerprint this call goes on with: its own, or once a record of the same
	 * request under an earlier fingerprint format was found, that record's.
	 */
	final String fingerprint() {
		if (this.fingerprint == null) {
			this.fingerprint = this.call.fingerprint().get();
		}
		return this.fingerprint;
	}

	/** One look, blocking: the store call, timed. */
	abstract R look();

	/**
	 * One look through the store's non-blocking variant: a blocking store's call runs on
	 * {@code executor}, never on the caller's thread.
	 */
	abstract CompletionStage<R> lookAsync(Executor executor);

	/**
	 * What a look's result decides; {@code null} means a run of the same request is in
	 * flight and the deadline is not reached: look again after {@link #pollDelay()}.
	 */
	abstract @Nullable Decision decide(R result);

	/** The answer to a record found under the key, as both modes give it. */
	final @Nullable Decision existing(IdempotencyRecord record) {
		this.fingerprint = ExistingRecords.sameRequestFingerprint(record, fingerprint(), this.call);
		return this.existingRecords.answer(record, this.fingerprint, this.operation, this.deadline);
	}

	/**
	 * Decides blocking: looks, and sleeps between two looks. The fingerprint is computed
	 * first (it may refuse the request, such as a body too large to read).
	 */
	final Decision decide() {
		fingerprint();
		while (true) {
			R result;
			try {
				result = look();
			}
			catch (RuntimeException ex) {
				return this.refusals.storeFailed(this.operation, ex);
			}
			Decision decision = decide(result);
			if (decision != null) {
				return decision;
			}
			if (!sleep(pollDelay())) {
				// Interrupted: not a store failure, so never a reason to run unprotected.
				return inFlight();
			}
		}
	}

	/**
	 * Decides without blocking the caller: each look through {@link #lookAsync}, each
	 * wait a delay on the JDK's delay scheduler that holds no thread.
	 */
	final CompletableFuture<Decision> decideAsync(Executor executor) {
		try {
			fingerprint();
		}
		catch (RuntimeException ex) {
			// Such as a body too large to read: nothing ran.
			return CompletableFuture.failedFuture(ex);
		}
		CompletionStage<R> looked;
		try {
			looked = lookAsync(executor);
		}
		catch (RuntimeException ex) {
			// Such as a full executor: the store could not be asked.
			return CompletableFuture.completedFuture(this.refusals.storeFailed(this.operation, ex));
		}
		return looked.toCompletableFuture().handle((result, error) -> {
			if (error != null) {
				return CompletableFuture.completedFuture(this.refusals.storeFailed(this.operation, unwrap(error)));
			}
			Decision decision = decide(result);
			if (decision != null) {
				return CompletableFuture.completedFuture(decision);
			}
			Executor later = CompletableFuture.delayedExecutor(pollDelay().toMillis(), TimeUnit.MILLISECONDS,
					Runnable::run);
			return CompletableFuture.supplyAsync(() -> this, later).thenCompose((self) -> decideAsync(executor));
		}).thenCompose(Function.identity());
	}

	/** The wait before the next look: a poll interval, at most until the deadline. */
	private Duration pollDelay() {
		return this.existingRecords.pollDelay(this.deadline);
	}

	private Decision inFlight() {
		return this.refusals.reject(IdempotencyOutcome.IN_FLIGHT, this.operation, this.refusals.inFlight());
	}

	private static Exception unwrap(Throwable error) {
		Throwable cause = cause(error);
		return (cause instanceof Exception ex) ? ex : new IllegalStateException(cause);
	}

	/** What a future failed with, out of the exceptions that wrap it. */
	static Throwable cause(Throwable error) {
		Throwable cause = error;
		while ((cause instanceof CompletionException || cause instanceof ExecutionException)
				&& cause.getCause() != null) {
			cause = cause.getCause();
		}
		return cause;
	}

	private static boolean sleep(Duration duration) {
		try {
			Thread.sleep(Math.max(1, duration.toMillis()));
			return true;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

}
