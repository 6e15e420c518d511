package dev.idempotency.store.memory;

import java.time.Duration;
import java.time.Instant;
import java.util.function.Supplier;

import dev.idempotency.store.IdempotencyStoreFullException;
import org.jspecify.annotations.Nullable;

/**
 * A bound of the in-memory store would be passed; thrown inside a compute, so the map
 * stays unchanged. Carries when the oldest record that could make room expires. Its
 * message is written only when it is read: a full store that evicts throws one for each
 * new key, and makes room without reading it.
 */
final class StoreFullException extends RuntimeException {

	private final Supplier<String> message;

	private @Nullable String written;

	private final @Nullable Instant roomAt;

	/** Records past the bound, to evict. */
	final int entriesShort;

	/** Bytes past the bound, to evict. */
	final long bytesShort;

	/**
	 * Whether evicting could make it fit (not a share, not larger than the store).
	 */
	final boolean evictionCanHelp;

	/**
	 * @param message what is full, in words, written when first read
	 */
	StoreFullException(Supplier<String> message, @Nullable Instant roomAt, int entriesShort, long bytesShort,
			boolean evictionCanHelp) {
		super(null, null, false, false);
		this.message = message;
		this.roomAt = roomAt;
		this.entriesShort = entriesShort;
		this.bytesShort = bytesShort;
		this.evictionCanHelp = evictionCanHelp;
	}

	@Override
	public String getMessage() {
		String message = this.written;
		if (message == null) {
			message = this.message.get();
			this.written = message;
		}
		return message;
	}

	/**
	 * This refusal once eviction found nothing it may take: the room is held by live
	 * records, which end within their lease.
	 */
	StoreFullException ofLiveRecords(Instant roomAt) {
		String message = getMessage() + ", no completed record to evict";
		return new StoreFullException(() -> message, roomAt, this.entriesShort, this.bytesShort, false);
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
