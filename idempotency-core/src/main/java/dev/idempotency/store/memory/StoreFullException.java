package dev.idempotency.store.memory;

import java.time.Duration;
import java.time.Instant;

import dev.idempotency.store.IdempotencyStoreFullException;
import org.jspecify.annotations.Nullable;

/**
 * A bound of the in-memory store would be passed; thrown inside a compute, so the map
 * stays unchanged. Carries when the oldest record that could make room expires.
 */
final class StoreFullException extends RuntimeException {

	private final @Nullable Instant roomAt;

	/** Records past the bound, to evict. */
	final int entriesShort;

	/** Bytes past the bound, to evict. */
	final long bytesShort;

	/**
	 * Whether evicting could make it fit (not a share, not larger than the store).
	 */
	final boolean evictionCanHelp;

	StoreFullException(String message, @Nullable Instant roomAt, int entriesShort, long bytesShort,
			boolean evictionCanHelp) {
		super(message, null, false, false);
		this.roomAt = roomAt;
		this.entriesShort = entriesShort;
		this.bytesShort = bytesShort;
		this.evictionCanHelp = evictionCanHelp;
	}

	/**
	 * This refusal once eviction found nothing it may take: the room is held by live
	 * records, which end within their lease.
	 */
	StoreFullException ofLiveRecords(Instant roomAt) {
		return new StoreFullException(getMessage() + ", no completed record to evict", roomAt, this.entriesShort,
				this.bytesShort, false);
	}

	IdempotencyStoreFullException refusal(String consequence, Instant now) {
		Duration retryAfter = (this.roomAt != null) ? Duration.between(now, this.roomAt) : null;
		if (retryAfter != null && retryAfter.isNegative()) {
			retryAfter = Duration.ZERO;
		}
		return new IdempotencyStoreFullException("in-memory idempotency store is full (" + getMessage() + "); "
				+ consequence + ((retryAfter != null) ? "; the oldest record expires in " + retryAfter : ""),
				retryAfter);
	}

}
