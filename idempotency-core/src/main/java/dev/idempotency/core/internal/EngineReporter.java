package dev.idempotency.core.internal;

import java.util.Locale;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;

import dev.idempotency.core.ExecutionResult;
import dev.idempotency.core.IdempotencyListener;
import dev.idempotency.core.IdempotencyOutcome;
import dev.idempotency.store.RecordId;
import io.micrometer.observation.Observation;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Tells the engine's {@link IdempotencyListener} of every decision, run and store call,
 * logs decisions and runs at DEBUG, and ends the observation of a run when it is
 * reported.
 */
final class EngineReporter {

	/** Logs as the engine, whose logger name users already configure. */
	private static final Log logger = LogFactory.getLog(IdempotencyEngine.class);

	private final IdempotencyListener listener;

	EngineReporter(IdempotencyListener listener) {
		this.listener = listener;
	}

	IdempotencyListener listener() {
		return this.listener;
	}

	/**
	 * Reports the one outcome of a request and logs it at DEBUG as
	 * {@code outcome=<outcome> operation=<name>
	 * key=<key> scope=<first 12 hex of SHA-256(scope)>}: the scope is hashed because it
	 * names a principal.
	 */
	void report(IdempotencyOutcome outcome, String operation, @Nullable RecordId id) {
		if (logger.isDebugEnabled()) {
			logger
				.debug("outcome=" + outcome.name().toLowerCase(Locale.ROOT) + " operation=" + operation + ((id != null)
						? " key=" + id.key() + " scope=" + Fingerprints.sha256Hex(id.scope()).substring(0, 12) : ""));
		}
		this.listener.onOutcome(outcome, operation);
	}

	/** Reports what became of a run, once, and logs it at DEBUG like {@link #report}. */
	void finished(ExecutionResult result, Reservation reservation) {
		if (logger.isDebugEnabled()) {
			logger.debug("result=" + result.name().toLowerCase(Locale.ROOT) + " operation=" + reservation.operation()
					+ " key=" + reservation.id().key() + " scope="
					+ Fingerprints.sha256Hex(reservation.id().scope()).substring(0, 12));
		}
		Observation observation = reservation.observation();
		if (observation != null) {
			RequestObservations.stop(observation, ObservedOutcome.of(result));
		}
		this.listener.onExecutionFinished(result, reservation.operation());
	}

	/** Makes a store call and reports its duration and whether it failed. */
	<T> T timed(String call, Supplier<T> storeCall) {
		long start = System.nanoTime();
		boolean failed = true;
		try {
			T result = storeCall.get();
			failed = false;
			return result;
		}
		finally {
			this.listener.onStoreCall(call, System.nanoTime() - start, failed);
		}
	}

	/**
	 * Times a store call that does not block: from the call to the completion of its
	 * stage, reported on the thread that completes it.
	 */
	<T> CompletionStage<T> timedAsync(String call, Supplier<CompletionStage<T>> storeCall) {
		long start = System.nanoTime();
		CompletionStage<T> stage;
		try {
			stage = storeCall.get();
		}
		catch (RuntimeException ex) {
			this.listener.onStoreCall(call, System.nanoTime() - start, true);
			throw ex;
		}
		return stage
			.whenComplete((result, error) -> this.listener.onStoreCall(call, System.nanoTime() - start, error != null));
	}

}
