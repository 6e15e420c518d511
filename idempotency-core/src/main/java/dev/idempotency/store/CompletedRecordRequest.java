package dev.idempotency.store;

import java.time.Duration;
import java.util.Objects;

/**
 * What the engine asks a store to record in record-after-success mode: the final response
 * of an operation that ran without a reservation.
 *
 * @param id the record to create
 * @param fingerprint SHA-256 (hex) of the request
 * @param operation a name for the operation, kept for diagnostics
 * @param response the final response, whole
 * @param retention how long the record lives (lifetime + grace), counted by the store's
 * clock
 * @since 0.1.0
 */
public record CompletedRecordRequest(RecordId id, String fingerprint, String operation, StoredResponse response,
		Duration retention) {

	public CompletedRecordRequest {
		Objects.requireNonNull(id, "id");
		Objects.requireNonNull(fingerprint, "fingerprint");
		Objects.requireNonNull(operation, "operation");
		Objects.requireNonNull(response, "response");
		if (retention.isNegative() || retention.isZero()) {
			throw new IllegalArgumentException("retention must be positive");
		}
	}
}
