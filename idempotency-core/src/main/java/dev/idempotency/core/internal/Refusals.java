package dev.idempotency.core.internal;

import java.time.Duration;

import dev.idempotency.core.IdempotencyError;
import dev.idempotency.core.IdempotencyErrorType;
import dev.idempotency.core.IdempotencyOutcome;
import dev.idempotency.core.IdempotencySettings;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.IdempotencyStoreFullException;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.StoredResponseIntegrityException;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

/**
 * The errors the engine answers with, as its settings make them, and the refusals it
 * reports: each refused call is one reported outcome and one {@link Decision.Reject}.
 */
final class Refusals {

	/** Logs as the engine, whose logger name users already configure. */
	private static final Log logger = LogFactory.getLog(IdempotencyEngine.class);

	private final IdempotencySettings settings;

	private final IdempotencyStore store;

	private final EngineReporter reporter;

	Refusals(IdempotencySettings settings, IdempotencyStore store, EngineReporter reporter) {
		this.settings = settings;
		this.store = store;
		this.reporter = reporter;
	}

	Decision reject(IdempotencyOutcome outcome, String operation, IdempotencyError error) {
		this.reporter.report(outcome, operation, null);
		return new Decision.Reject(error);
	}

	Decision invalidKey(String operation, String reason) {
		return reject(IdempotencyOutcome.INVALID_KEY, operation,
				IdempotencyError.of(IdempotencyErrorType.INVALID_KEY, reason));
	}

	Decision keyRequired(String operation) {
		return reject(IdempotencyOutcome.INVALID_KEY, operation,
				IdempotencyError.of(IdempotencyErrorType.KEY_REQUIRED, "this operation requires an idempotency key"));
	}

	/**
	 * The store failed to decide a call: under fail-open the call runs unprotected, else
	 * it is refused 503 (a full store with its own Retry-After). A stored answer that
	 * failed its integrity check is refused 500 under either policy.
	 */
	Decision storeFailed(String operation, Exception ex) {
		StoredResponseIntegrityException integrity = StoredResponseIntegrityException.in(ex);
		if (integrity != null) {
			return integrityFailed(operation, integrity);
		}
		if (this.settings.storeFailure().mode() == IdempotencySettings.FailureMode.FAIL_OPEN) {
			logger.warn("Idempotency store " + this.store.name() + " failed; running " + operation
					+ " unprotected (fail-open): " + ex);
			this.reporter.report(IdempotencyOutcome.FAIL_OPEN, operation, null);
			return new Decision.Proceed(null);
		}
		if (ex instanceof IdempotencyStoreFullException full) {
			// Not a fault: no stack trace, and a refusal as cheap as the store's.
			logger.warn("Idempotency store " + this.store.name() + " is full; refusing " + operation
					+ " (fail-closed): " + full.getMessage());
			return reject(IdempotencyOutcome.STORE_ERROR, operation,
					new IdempotencyError(IdempotencyErrorType.STORE_UNAVAILABLE, 503,
							"the idempotency store is full; nothing was done, retry later",
							(full.retryAfter() != null) ? wholeSecondsAtLeastOne(full.retryAfter())
									: this.settings.storeFailure().retryAfter()));
		}
		logger.error("Idempotency store " + this.store.name() + " failed; refusing " + operation + " (fail-closed)",
				ex);
		return reject(IdempotencyOutcome.STORE_ERROR, operation,
				new IdempotencyError(IdempotencyErrorType.STORE_UNAVAILABLE, 503,
						"the idempotency store is unavailable; nothing was done, retry later",
						this.settings.storeFailure().retryAfter()));
	}

	/**
	 * A stored answer that cannot be trusted: neither replayed nor run again (running it
	 * again under fail-open is what a forger of the store would want), logged with the
	 * record but nothing of its content, and counted.
	 */
	private Decision integrityFailed(String operation, StoredResponseIntegrityException ex) {
		RecordId id = ex.recordId();
		logger.error("Stored answer of idempotency record "
				+ ((id != null) ? "key=" + id.key() + " scope=" + Fingerprints.sha256Hex(id.scope()).substring(0, 12)
						: "(unknown)")
				+ " failed its integrity check (" + ex.getMessage() + "); refusing " + operation
				+ " with 500: it is neither replayed nor run again. Check the store and the keys"
				+ " (idempotency.encryption), then remove the record with the idempotency endpoint, or let it expire");
		return reject(IdempotencyOutcome.INTEGRITY_FAILURE, operation,
				IdempotencyError.of(IdempotencyErrorType.INTEGRITY_CHECK_FAILED,
						"the answer stored for this idempotency key failed its integrity check: it is not replayed,"
								+ " and the request was not run again; nothing was done"));
	}

	/**
	 * A keyed call while the heartbeat is stopped, see {@link IdempotencyEngine#stop()}.
	 */
	Decision engineStopped(String operation) {
		return reject(IdempotencyOutcome.STORE_ERROR, operation,
				new IdempotencyError(IdempotencyErrorType.STORE_UNAVAILABLE, 503,
						"the idempotency engine is stopped (the application is shutting down); nothing was done,"
								+ " retry later",
						this.settings.storeFailure().retryAfter()));
	}

	static IdempotencyError keyReused() {
		return IdempotencyError.of(IdempotencyErrorType.KEY_REUSED,
				"this idempotency key was already used for a different request; use a new key");
	}

	IdempotencyError inFlight() {
		return new IdempotencyError(IdempotencyErrorType.REQUEST_IN_FLIGHT, this.settings.inFlight().status().status(),
				"a request with this idempotency key is still in progress; retry later",
				this.settings.inFlight().retryAfter());
	}

	/** See {@link IdempotencyEngine#transactionRolledBack(String)}. */
	IdempotencyError transactionRolledBack(String why) {
		return new IdempotencyError(IdempotencyErrorType.STORE_UNAVAILABLE, 503,
				"the request's transaction was" + " rolled back (" + why + "); nothing was done, retry later",
				this.settings.storeFailure().retryAfter());
	}

	/** A store's wait as a Retry-After: rounded up to whole seconds, at least one. */
	private static Duration wholeSecondsAtLeastOne(Duration wait) {
		long seconds = wait.getSeconds() + ((wait.getNano() > 0) ? 1 : 0);
		return Duration.ofSeconds(Math.max(1, seconds));
	}

}
