package dev.idempotency.core.internal;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

import dev.idempotency.core.ExecutionResult;
import dev.idempotency.core.IdempotencySettings;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.StoredResponse;
import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;

/**
 * What each mode of the protocol ({@link IdempotencySettings.Mode}) does its own way: how
 * a call finds its key free, and how a run records or gives up its answer. The engine
 * picks one when it is built and keeps the steps both share.
 */
interface ProtocolModel {

	/**
	 * The look at the key that decides a call with a valid key: run it, replay, or refuse
	 * (also when the store fails). A reservation it makes carries {@code observation},
	 * stopped when its run is {@link EngineReporter#finished finished}.
	 * @param atomicCompletion whether the door records the answer in the transaction of
	 * the operation's own writes, on the store's database
	 * ({@link IdempotencyEngine#begin(IdempotentCall, boolean)})
	 */
	Lookup<?> lookup(RecordId id, IdempotentCall call, Duration retention, @Nullable Observation observation,
			boolean atomicCompletion);

	/**
	 * A refusal of every keyed call before any look at the store (a stopped engine in
	 * lease mode), else {@code null}.
	 */
	default @Nullable Decision refusal(String operation) {
		return null;
	}

	/** Whether an answer with this status is recorded in this mode. */
	boolean records(int status);

	/**
	 * The run succeeded with this response (the reservation is finished now): the step
	 * that records or releases it, reports the result and gives the answer.
	 */
	Finishing<Answer> succeeded(Reservation reservation, StoredResponse response);

	/**
	 * The run failed, or its answer is not to be recorded (the reservation is finished
	 * now): the step that frees the key and reports {@code result} (or what prevented
	 * it), then gives {@code value}.
	 */
	<A extends @Nullable Object> Finishing<A> notRecorded(Reservation reservation, String reason,
			ExecutionResult result, A value);

	/**
	 * Atomic completion: the step that records the response in the run's own transaction
	 * and says what becomes of it.
	 */
	Finishing<AtomicOutcome> succeededInTransaction(Reservation reservation, StoredResponse response);

	/**
	 * Atomic completion: the run's transaction rolled back (or failed to commit): the
	 * step that frees the key if the outcome says so, and reports {@code result}.
	 */
	Finishing<@Nullable Void> rolledBack(Reservation reservation, AtomicOutcome outcome, ExecutionResult result);

	/**
	 * The answer to a run whose transaction the database rolled back to settle a conflict
	 * with another one, once it has ended; reports the run's result. Blocks while it
	 * waits.
	 */
	AtomicOutcome conflicted(Reservation reservation, AtomicOutcome outcome);

	/**
	 * {@link #conflicted} without blocking: its store calls through the store's
	 * non-blocking variants, a wait a delay that holds no thread.
	 * @param executor where a blocking store runs its calls
	 */
	CompletableFuture<AtomicOutcome> conflictedAsync(Reservation reservation, AtomicOutcome outcome, Executor executor);

	/** What becomes of the key of an abandoned run, in words for the log. */
	String afterAbandoning();

}
