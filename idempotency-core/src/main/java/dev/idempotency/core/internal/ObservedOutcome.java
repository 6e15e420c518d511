package dev.idempotency.core.internal;

import dev.idempotency.core.ExecutionResult;
import dev.idempotency.core.IdempotencyOutcome;

/**
 * What one protected call came to, as its observation's {@code idempotency.outcome}: the
 * engine's {@link IdempotencyOutcome} of the decision and, for a call that ran, the
 * {@link ExecutionResult} of its run, folded into the few values an operator filters by.
 */
enum ObservedOutcome {

	/**
	 * Ran under its key (also after taking over an expired lease), whatever it answered.
	 */
	EXECUTED("executed"),

	/** A completed record's response was replayed. */
	REPLAYED("replayed"),

	/**
	 * Ran, but another run of the key won the record: another owner took it over, or
	 * (record-after-success) another attempt recorded first or the key held another
	 * record when this run's answer was to be recorded.
	 */
	CONFLICT("conflict"),

	/** The key was reused with another request: 422. */
	MISMATCH("mismatch"),

	/** The first request with the key was still running after the wait. */
	IN_FLIGHT("in-flight"),

	/**
	 * A malformed, missing or out-of-window key, or a request too large to fingerprint.
	 */
	REFUSED("refused"),

	/**
	 * The store failed: the call was refused (fail-closed, or an answer that failed its
	 * integrity check), ran unprotected (fail-open), or ran and its result could not be
	 * stored.
	 */
	STORE_FAILURE("store-failure");

	private final String tag;

	ObservedOutcome(String tag) {
		this.tag = tag;
	}

	String tag() {
		return this.tag;
	}

	/** The outcome of a call the engine did not let run under a reservation. */
	static ObservedOutcome of(Decision decision) {
		if (decision instanceof Decision.Replay) {
			return REPLAYED;
		}
		if (decision instanceof Decision.Reject reject) {
			return switch (reject.error().type()) {
				case KEY_REUSED -> MISMATCH;
				case REQUEST_IN_FLIGHT -> IN_FLIGHT;
				case STORE_UNAVAILABLE, INTEGRITY_CHECK_FAILED -> STORE_FAILURE;
				case INVALID_KEY, KEY_REQUIRED, REQUEST_TOO_LARGE -> REFUSED;
			};
		}
		// Proceeds without a reservation although the call had a key: failed open.
		return STORE_FAILURE;
	}

	/** The outcome of a call that ran under a reservation, by what became of its run. */
	static ObservedOutcome of(ExecutionResult result) {
		return switch (result) {
			case ANSWERED_RECORDED, NOT_RECORDED, OWNERSHIP_LOST -> CONFLICT;
			case STORE_ERROR -> STORE_FAILURE;
			case COMPLETED, RELEASED, BODY_TOO_LARGE, ABANDONED -> EXECUTED;
		};
	}

}
