package dev.idempotency.store;

/**
 * The outcome of {@link IdempotencyStore#reserve}: either the caller owns the record now,
 * or it exists.
 *
 * @since 0.1.0
 */
public sealed interface ReserveResult {

	/**
	 * The caller owns the record and must run the operation.
	 *
	 * @param takenOver {@code true} when an earlier owner's lease had expired and was
	 * taken over
	 */
	record Acquired(boolean takenOver) implements ReserveResult {
	}

	/**
	 * Somebody else's record: in progress with a live lease, completed, or created for
	 * another request (compare the fingerprint). Nothing was changed.
	 *
	 * @param record the record as the store holds it
	 */
	record Existing(IdempotencyRecord record) implements ReserveResult {
	}

}
