package dev.idempotency.engine;

/** Told of every outcome; the auto-configuration binds one to Micrometer when it is present. */
@FunctionalInterface
public interface IdempotencyListener {

	IdempotencyListener NONE = (outcome, operation) -> {
	};

	void onOutcome(IdempotencyOutcome outcome, String operation);

}
