package dev.idempotency.core.internal;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

import dev.idempotency.core.IdempotencyOutcome;
import dev.idempotency.core.IdempotencySettings;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.RecordState;
import org.jspecify.annotations.Nullable;

/**
 * The answer to a call whose key already holds a record, the same in both modes: 422 for
 * another request, the replay of a completed one, or for one in progress, a wait of up to
 * {@code idempotency.in-flight.max-wait} and then the in-flight error.
 */
final class ExistingRecords {

	private final IdempotencySettings settings;

	private final Clock clock;

	private final Refusals refusals;

	private final EngineReporter reporter;

	ExistingRecords(IdempotencySettings settings, Clock clock, Refusals refusals, EngineReporter reporter) {
		this.settings = settings;
		this.clock = clock;
		this.refusals = refusals;
		this.reporter = reporter;
	}

	/** Until when a call waits for a run of the same request in flight elsewhere. */
	Instant inFlightDeadline() {
		return this.clock.instant().plus(this.settings.inFlight().maxWait());
	}

	/**
	 * The fingerprint this call goes on with: the record's, when the record was made by
	 * the same request under an earlier fingerprint format (so that it is replayed, or
	 * taken over by the store, as the same request), else {@code fingerprint}.
	 */
	static String sameRequestFingerprint(IdempotencyRecord record, String fingerprint, IdempotentCall call) {
		if (record.fingerprint().equals(fingerprint)
				|| !call.earlierFingerprints().get().contains(record.fingerprint())) {
			return fingerprint;
		}
		return record.fingerprint();
	}

	/**
	 * The answer to a call whose key holds a record: 422 for another request, the replay
	 * of a completed one, or for one in progress, once {@code deadline} has passed, the
	 * in-flight error; {@code null} means look again after {@link #pollDelay}.
	 */
	@Nullable Decision answer(IdempotencyRecord record, String fingerprint, String operation, Instant deadline) {
		if (!record.fingerprint().equals(fingerprint)) {
			return this.refusals.reject(IdempotencyOutcome.MISMATCH, operation, Refusals.keyReused());
		}
		if (record.state() == RecordState.COMPLETED) {
			this.reporter.report(IdempotencyOutcome.REPLAYED, operation, record.id());
			return new Decision.Replay(record.completedResponse());
		}
		Duration remaining = Duration.between(this.clock.instant(), deadline);
		if (remaining.isNegative() || remaining.isZero()) {
			return this.refusals.reject(IdempotencyOutcome.IN_FLIGHT, operation, this.refusals.inFlight());
		}
		return null;
	}

	/**
	 * The wait before the next look at a record in flight: a poll interval, at most until
	 * {@code deadline}.
	 */
	Duration pollDelay(Instant deadline) {
		return min(Duration.between(this.clock.instant(), deadline), this.settings.inFlight().pollInterval());
	}

	private static Duration min(Duration a, Duration b) {
		return (a.compareTo(b) <= 0) ? a : b;
	}

}
