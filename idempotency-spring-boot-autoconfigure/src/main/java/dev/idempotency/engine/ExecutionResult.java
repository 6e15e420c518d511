package dev.idempotency.engine;

/**
 * What became of an operation that ran under a reservation (after
 * {@link IdempotencyOutcome#EXECUTED} or {@link IdempotencyOutcome#TAKEN_OVER}): reported
 * once per run, when it finishes.
 */
public enum ExecutionResult {

	/** The operation's response was stored for replay. */
	COMPLETED,

	/**
	 * The record was deleted after a failure or a non-final response, so a retry runs
	 * again.
	 */
	RELEASED,

	/** The response was larger than the stored maximum: released, never truncated. */
	BODY_TOO_LARGE,

	/**
	 * Another owner had taken the record over (found by a heartbeat or a fenced write);
	 * nothing changed.
	 */
	OWNERSHIP_LOST,

	/**
	 * The operation's answer will not come (an asynchronous request timed out or failed)
	 * while the operation may still run: not released; its lease runs out, then a retry
	 * takes over.
	 */
	ABANDONED,

	/**
	 * The store failed while storing or releasing the result: nothing stored; the key
	 * frees itself when its lease runs out (or at once if the store released it).
	 */
	STORE_ERROR

}
