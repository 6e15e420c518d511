package dev.idempotency.core;

/**
 * What became of an operation that ran under a reservation (after
 * {@link IdempotencyOutcome#EXECUTED} or {@link IdempotencyOutcome#TAKEN_OVER}): reported
 * once per run, when it finishes. In record-after-success mode a run holds no record:
 * {@link #RELEASED}, {@link #BODY_TOO_LARGE} and {@link #ABANDONED} then write nothing,
 * and a retry runs again.
 *
 * @since 0.1.0
 */
public enum ExecutionResult {

	/** The operation's response was stored for replay. */
	COMPLETED,

	/**
	 * Record-after-success mode: another attempt of the same request (same key and
	 * fingerprint) ran at the same time and recorded its success first. This run's
	 * response (a success that lost the recording, or any other answer) was not stored;
	 * it was answered with the recorded one, so every attempt gets one answer.
	 */
	ANSWERED_RECORDED,

	/**
	 * Record-after-success mode: when the response was to be recorded, the key held
	 * another request's record (another fingerprint) or a lease-mode reservation in
	 * progress. Nothing changed; this run's own response was answered, not stored.
	 */
	NOT_RECORDED,

	/**
	 * The record was deleted after a failure or a non-final response, so a retry runs
	 * again. In record-after-success mode: nothing was recorded, because the operation
	 * failed or its response was not a success (2xx).
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
	 * frees itself when its lease runs out (or at once if the store released it; in
	 * record-after-success mode nothing holds it).
	 */
	STORE_ERROR

}
