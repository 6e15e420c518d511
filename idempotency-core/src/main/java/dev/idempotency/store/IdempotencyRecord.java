package dev.idempotency.store;

import java.time.Instant;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * A record as a store reports it when the caller did not become its owner.
 *
 * @param id the record's identity
 * @param fingerprint SHA-256 (hex) of the request that created the record
 * @param operation the operation name the record was created for
 * @param state in progress or completed
 * @param leaseExpiresAt when the current owner's lease ends (in progress only, by the
 * store's clock)
 * @param expiresAt when the record is removed (by the store's clock)
 * @param response the stored response (completed only)
 * @since 0.1.0
 */
public record IdempotencyRecord(RecordId id, String fingerprint, String operation, RecordState state,
		@Nullable Instant leaseExpiresAt, Instant expiresAt, @Nullable StoredResponse response) {

	public IdempotencyRecord {
		Objects.requireNonNull(id, "id");
		Objects.requireNonNull(fingerprint, "fingerprint");
		Objects.requireNonNull(state, "state");
		if (state == RecordState.COMPLETED && response == null) {
			throw new IllegalArgumentException("a completed record has a response");
		}
	}

	/**
	 * The stored response of a completed record.
	 * @return the response, never {@code null}
	 * @throws IllegalStateException if the record is in progress
	 */
	public StoredResponse completedResponse() {
		StoredResponse stored = this.response;
		if (stored == null) {
			throw new IllegalStateException("record " + this.id + " is in progress: it has no response yet");
		}
		return stored;
	}
}
