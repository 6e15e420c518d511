package dev.idempotency.store;

import java.time.Instant;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * A record as an operator sees it ({@link IdempotencyStore#inspect}): the record, when it
 * was created and who holds its lease.
 *
 * @param record the record
 * @param createdAt when the record was created (a taken-over record keeps its first
 * creation time), by the store's clock; {@code null} where the store did not keep it (a
 * Redis record written by an earlier version)
 * @param ownerToken the token of the owner holding the lease (in progress only)
 * @since 0.1.0
 */
public record InspectedRecord(IdempotencyRecord record, @Nullable Instant createdAt, @Nullable String ownerToken) {

	public InspectedRecord {
		Objects.requireNonNull(record, "record");
	}

}
