package dev.idempotency.core.internal;

import java.util.Locale;

import dev.idempotency.core.IdempotencyObservationContext;
import dev.idempotency.core.IdempotencySettings;
import io.micrometer.common.KeyValues;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

/**
 * Makes each protected call one {@value #NAME} observation, and is its default
 * convention. The low-cardinality key values are built once, per door and outcome (model
 * and store are the engine's own), so that a call builds no tags; with a no-op registry a
 * call costs one check and nothing is created.
 */
final class RequestObservations implements ObservationConvention<IdempotencyObservationContext> {

	static final String NAME = "idempotency.request";

	static final String KEY_HASH = "idempotency.key.hash";

	private final ObservationRegistry registry;

	private final boolean keyHash;

	/**
	 * By door, then by outcome: index 0 before the outcome is known (at the start), else
	 * the outcome's ordinal + 1.
	 */
	private final KeyValues[][] lowCardinality;

	RequestObservations(ObservationRegistry registry, boolean keyHash, IdempotencySettings.Mode mode, String store) {
		this.registry = registry;
		this.keyHash = keyHash;
		String model = mode.name().toLowerCase(Locale.ROOT).replace('_', '-');
		IdempotentCall.Door[] doors = IdempotentCall.Door.values();
		ObservedOutcome[] outcomes = ObservedOutcome.values();
		this.lowCardinality = new KeyValues[doors.length][outcomes.length + 1];
		for (IdempotentCall.Door door : doors) {
			KeyValues common = KeyValues.of("idempotency.door", door.tag(), "idempotency.model", model,
					"idempotency.store", store);
			this.lowCardinality[door.ordinal()][0] = common;
			for (ObservedOutcome outcome : outcomes) {
				this.lowCardinality[door.ordinal()][outcome.ordinal() + 1] = common.and("idempotency.outcome",
						outcome.tag());
			}
		}
	}

	/**
	 * The started observation of a call, {@code null} when nothing observes (a no-op
	 * registry, or a call without a key that needs none: it runs unprotected, as without
	 * the starter).
	 */
	@Nullable Observation start(IdempotentCall call) {
		if (this.registry.isNoop() || (call.keyValues().isEmpty() && !call.keyRequired())) {
			return null;
		}
		RequestObservationContext context = new RequestObservationContext(call.door(), call.operation());
		Observation observation = Observation.createNotStarted(null, this, () -> context, this.registry);
		return observation.isNoop() ? null : observation.start();
	}

	/** Whether the key's hash is a high-cardinality key value. */
	boolean keyHash() {
		return this.keyHash;
	}

	static void keyHash(Observation observation, String key) {
		if (observation.getContext() instanceof RequestObservationContext context) {
			context.keyHash(Fingerprints.sha256Hex(key).substring(0, 16));
		}
	}

	static void stop(Observation observation, ObservedOutcome outcome) {
		if (observation.getContext() instanceof RequestObservationContext context) {
			context.outcome(outcome);
		}
		observation.stop();
	}

	static void stop(Observation observation, ObservedOutcome outcome, Throwable error) {
		observation.error(error);
		stop(observation, outcome);
	}

	@Override
	public KeyValues getLowCardinalityKeyValues(IdempotencyObservationContext context) {
		RequestObservationContext own = (RequestObservationContext) context;
		ObservedOutcome outcome = own.outcome();
		return this.lowCardinality[own.door().ordinal()][(outcome != null) ? outcome.ordinal() + 1 : 0];
	}

	@Override
	public KeyValues getHighCardinalityKeyValues(IdempotencyObservationContext context) {
		String hash = context.getKeyHash();
		return (hash != null) ? KeyValues.of(KEY_HASH, hash) : KeyValues.empty();
	}

	@Override
	public boolean supportsContext(Observation.Context context) {
		return context instanceof RequestObservationContext;
	}

	@Override
	public String getName() {
		return NAME;
	}

}
