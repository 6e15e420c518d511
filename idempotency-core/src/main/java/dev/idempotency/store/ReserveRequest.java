package dev.idempotency.store;

import java.time.Duration;
import java.util.Objects;

/**
 * What the engine asks a store to reserve.
 *
 * @param id the record to reserve
 * @param fingerprint SHA-256 (hex) of the request
 * @param operation a name for the operation, kept for diagnostics
 * @param ownerToken a fresh random token that fences every later transition of this owner
 * @param lease how long the owner is presumed alive without a heartbeat
 * @param retention how long a new record lives (lifetime + grace), counted by the store's
 * clock
 * @param atomicCompletion whether the run that follows completes atomically: its answer
 * is recorded ({@link IdempotencyStore#complete}) in the transaction of the operation's
 * own writes, on this store's database, or the key is released. A store whose commits are
 * ordered (PostgreSQL's one WAL per server) may then commit the reservation without
 * waiting for it to be durable: the completion's durable commit comes after it, and any
 * write of the operation in that database commits after it too, so a crash cannot lose
 * the reservation and keep the operation's writes there
 * @since 0.1.0
 */
public record ReserveRequest(RecordId id, String fingerprint, String operation, String ownerToken, Duration lease,
		Duration retention, boolean atomicCompletion) {

	public ReserveRequest {
		Objects.requireNonNull(id, "id");
		Objects.requireNonNull(fingerprint, "fingerprint");
		Objects.requireNonNull(operation, "operation");
		Objects.requireNonNull(ownerToken, "ownerToken");
		if (lease.isNegative() || lease.isZero()) {
			throw new IllegalArgumentException("lease must be positive");
		}
		if (retention.compareTo(lease) < 0) {
			throw new IllegalArgumentException("retention must not be shorter than the lease");
		}
	}

	/** A reservation whose run does not complete atomically. */
	public ReserveRequest(RecordId id, String fingerprint, String operation, String ownerToken, Duration lease,
			Duration retention) {
		this(id, fingerprint, operation, ownerToken, lease, retention, false);
	}
}
