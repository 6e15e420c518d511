package dev.idempotency.store;

/**
 * The two states a stored record can be in. A released record is deleted, not kept in a
 * state.
 *
 * @since 0.1.0
 */
public enum RecordState {

	/**
	 * An owner is running the operation; its lease says how long it is presumed alive.
	 */
	IN_PROGRESS,

	/** The operation finished with a final response that is replayed to retries. */
	COMPLETED

}
