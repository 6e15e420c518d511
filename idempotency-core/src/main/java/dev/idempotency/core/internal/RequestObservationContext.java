package dev.idempotency.core.internal;

import dev.idempotency.core.IdempotencyObservationContext;
import org.jspecify.annotations.Nullable;

/**
 * The engine's {@link IdempotencyObservationContext}, which it fills as the call goes.
 */
final class RequestObservationContext extends IdempotencyObservationContext {

	private final IdempotentCall.Door door;

	private final String operation;

	private @Nullable ObservedOutcome outcome;

	private @Nullable String keyHash;

	RequestObservationContext(IdempotentCall.Door door, String operation) {
		this.door = door;
		this.operation = operation;
	}

	@Override
	public String getDoor() {
		return this.door.tag();
	}

	@Override
	public String getOperation() {
		return this.operation;
	}

	@Override
	public @Nullable String getOutcome() {
		ObservedOutcome outcome = this.outcome;
		return (outcome != null) ? outcome.tag() : null;
	}

	@Override
	public @Nullable String getKeyHash() {
		return this.keyHash;
	}

	IdempotentCall.Door door() {
		return this.door;
	}

	@Nullable ObservedOutcome outcome() {
		return this.outcome;
	}

	void outcome(ObservedOutcome outcome) {
		this.outcome = outcome;
	}

	void keyHash(String keyHash) {
		this.keyHash = keyHash;
	}

}
