package dev.idempotency.crash;

/** Where a node of {@link CrashTestApplication} crashes while it serves an order. */
enum CrashPoint {

	/**
	 * Inside the business transaction, after the order, the ledger update and the
	 * record's completion were written, before the commit: nothing of it may survive.
	 */
	BEFORE_COMMIT,

	/**
	 * After the business transaction committed, before the answer is written: all of it
	 * survives, and the client has no answer.
	 */
	AFTER_COMMIT,

	/** No crash: the control. */
	NONE

}
