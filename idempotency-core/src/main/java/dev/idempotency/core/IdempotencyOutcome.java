package dev.idempotency.core;

/**
 * What the engine decided for one request: exactly one per request, for metrics and logs.
 * What became of a request that ran under a reservation is reported separately, as an
 * {@link ExecutionResult}.
 *
 * @since 0.1.0
 */
public enum IdempotencyOutcome {

	/** No key and none required: ran unprotected. */
	UNPROTECTED,

	/**
	 * The method front door's key expression yielded {@code null} and no key is required:
	 * ran unprotected, logged at WARN.
	 */
	NULL_KEY,

	/** First request with its key: the operation runs. */
	EXECUTED,

	/** Runs after taking over the record of an owner whose lease had expired. */
	TAKEN_OVER,

	/** A completed record's response was replayed. */
	REPLAYED,

	/** The key was reused with another request: 422. */
	MISMATCH,

	/** A duplicate found the first request still running after the wait. */
	IN_FLIGHT,

	/** The key was malformed or outside its window (or missing where required): 400. */
	INVALID_KEY,

	/** The store failed and the request was refused (fail-closed): 503, nothing ran. */
	STORE_ERROR,

	/** The store failed and the request ran unprotected (fail-open). */
	FAIL_OPEN,

	/**
	 * The answer stored for the key failed its integrity check: 500, neither replayed nor
	 * run again, whatever the store-failure policy.
	 */
	INTEGRITY_FAILURE

}
