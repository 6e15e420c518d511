package dev.idempotency.store.memory;

import java.time.Instant;

import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.RecordState;
import dev.idempotency.store.StoredResponse;
import org.jspecify.annotations.Nullable;

/** One record of the in-memory store: in progress without a response. */
record InMemoryEntry(String fingerprint, String operation, @Nullable String ownerToken,
		@Nullable Instant leaseExpiresAt, Expiry expiry, @Nullable KeptResponse response) {

	/**
	 * Bytes counted per entry besides its strings and response: map node, record,
	 * instants, its place in the expiry index.
	 */
	static final int ENTRY_OVERHEAD_BYTES = 256;

	boolean isExpired(Instant now) {
		return !now.isBefore(this.expiry.at());
	}

	/**
	 * Estimated bytes retained: two bytes per character, the response, a fixed overhead.
	 */
	long weight(RecordId id) {
		long characters = id.scope().length() + id.key().length() + this.fingerprint.length() + this.operation.length()
				+ ((this.ownerToken != null) ? this.ownerToken.length() : 0);
		return ENTRY_OVERHEAD_BYTES + 2 * characters + ((this.response != null) ? this.response.bytes() : 0);
	}

	IdempotencyRecord toRecord(RecordId id) {
		KeptResponse kept = this.response;
		StoredResponse response = (kept != null) ? kept.response() : null;
		return new IdempotencyRecord(id, this.fingerprint, this.operation,
				(response != null) ? RecordState.COMPLETED : RecordState.IN_PROGRESS, this.leaseExpiresAt,
				this.expiry.at(), response);
	}

}
