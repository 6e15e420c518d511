package dev.idempotency.engine;

/** Told of every outcome; the auto-configuration binds one to Micrometer when it is present. */
@FunctionalInterface
public interface IdempotencyListener {

	IdempotencyListener NONE = (outcome, operation) -> {
	};

	void onOutcome(IdempotencyOutcome outcome, String operation);

	/**
	 * One store call ({@code reserve}, {@code complete}, {@code release}, {@code heartbeat}) took
	 * {@code nanos}; {@code failed} when it threw.
	 */
	default void onStoreCall(String call, long nanos, boolean failed) {
	}

}
