package dev.idempotency.core;

/**
 * Told of what the engine decides and does; the auto-configuration binds one to
 * Micrometer when it is present. Called on request threads and on the heartbeat thread:
 * implementations must be thread-safe and quick.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface IdempotencyListener {

	IdempotencyListener NONE = (outcome, operation) -> {
	};

	/** The decision for one request: called exactly once per request. */
	void onOutcome(IdempotencyOutcome outcome, String operation);

	/**
	 * What became of an operation that ran under a reservation: called exactly once per
	 * {@link IdempotencyOutcome#EXECUTED} or {@link IdempotencyOutcome#TAKEN_OVER}
	 * request whose run finished (or whose ownership was lost while it ran).
	 */
	default void onExecutionFinished(ExecutionResult result, String operation) {
	}

	/**
	 * One store call ({@code reserve}, {@code complete}, {@code release},
	 * {@code heartbeat}; in record-after-success mode {@code find} and
	 * {@code record_completed}) took {@code nanos}; {@code failed} when it threw.
	 */
	default void onStoreCall(String call, long nanos, boolean failed) {
	}

}
