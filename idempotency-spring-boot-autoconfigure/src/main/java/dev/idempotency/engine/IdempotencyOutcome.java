package dev.idempotency.engine;

/** What happened to one protected request or one finished operation, for metrics and logs. */
public enum IdempotencyOutcome {

	/** No key and none required: ran unprotected. */
	UNPROTECTED,

	/** First request with its key: the operation runs. */
	EXECUTED,

	/** Ran after taking over the record of an owner whose lease had expired. */
	TAKEN_OVER,

	/** A completed record's response was replayed. */
	REPLAYED,

	/** The key was reused with another request: 422. */
	MISMATCH,

	/** A duplicate found the first request still running after the wait. */
	IN_FLIGHT,

	/** The key was malformed or outside its window (or missing where required): 400. */
	INVALID_KEY,

	/** The operation's response was stored for replay. */
	COMPLETED,

	/** The record was deleted after a failure or a non-final response, so a retry runs again. */
	RELEASED,

	/** The response was larger than the stored maximum: released, never truncated. */
	BODY_TOO_LARGE,

	/** A fenced write found that another owner had taken the record over; nothing changed. */
	OWNERSHIP_LOST,

	/** The store failed and the request was refused (fail-closed). */
	STORE_ERROR,

	/** The store failed and the request ran unprotected (fail-open). */
	FAIL_OPEN

}
