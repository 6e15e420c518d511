package dev.idempotency.core;

import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;

/**
 * The context of one {@code idempotency.request} observation: one protected call, from
 * the engine's decision to the end of its run (or to the decision itself for a replay or
 * a refusal). An {@code ObservationFilter} or a global {@code ObservationConvention} of
 * the application can read it. The engine makes it; applications only read it.
 *
 * @since 0.1.0
 */
public abstract class IdempotencyObservationContext extends Observation.Context {

	/** For the engine, which makes the only subclass. */
	protected IdempotencyObservationContext() {
	}

	/** The front door of the call: {@code http} or {@code method}. */
	public abstract String getDoor();

	/** The operation's name, as the {@code operation} tag of the engine's counters. */
	public abstract String getOperation();

	/**
	 * What the call came to ({@code executed}, {@code replayed}, {@code conflict},
	 * {@code mismatch}, {@code in-flight}, {@code refused}, {@code store-failure});
	 * {@code null} until the observation stops.
	 */
	public abstract @Nullable String getOutcome();

	/**
	 * The first 16 hex digits of the SHA-256 of the key as the engine keeps it, when
	 * {@code idempotency.observation.key-hash} asks for it; else {@code null}.
	 */
	public abstract @Nullable String getKeyHash();

}
