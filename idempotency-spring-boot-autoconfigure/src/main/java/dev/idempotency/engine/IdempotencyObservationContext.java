package dev.idempotency.engine;

import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;

/**
 * The context of one {@code idempotency.request} observation: one protected call, from
 * the engine's decision to the end of its run (or to the decision itself for a replay or
 * a refusal). An {@code ObservationFilter} or a global {@code ObservationConvention} of
 * the application can read it.
 *
 * @since 0.1.0
 */
public final class IdempotencyObservationContext extends Observation.Context {

	private final IdempotentCall.Door door;

	private final String operation;

	private @Nullable ObservedOutcome outcome;

	private @Nullable String keyHash;

	IdempotencyObservationContext(IdempotentCall.Door door, String operation) {
		this.door = door;
		this.operation = operation;
	}

	/** The front door of the call: {@code http} or {@code method}. */
	public String getDoor() {
		return this.door.tag();
	}

	/** The operation's name, as the {@code operation} tag of the engine's counters. */
	public String getOperation() {
		return this.operation;
	}

	/**
	 * What the call came to ({@code executed}, {@code replayed}, {@code conflict},
	 * {@code mismatch}, {@code in-flight}, {@code refused}, {@code store-failure});
	 * {@code null} until the observation stops.
	 */
	public @Nullable String getOutcome() {
		ObservedOutcome outcome = this.outcome;
		return (outcome != null) ? outcome.tag() : null;
	}

	/**
	 * The first 16 hex digits of the SHA-256 of the key as the engine keeps it, when
	 * {@code idempotency.observation.key-hash} asks for it; else {@code null}.
	 */
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
