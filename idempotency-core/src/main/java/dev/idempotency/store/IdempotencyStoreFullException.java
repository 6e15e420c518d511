package dev.idempotency.store;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * The store is full: it refused a new record and keeps refusing until records expire.
 * Nothing was changed. The engine answers it like any store failure (503 when
 * fail-closed), with {@link #retryAfter()} as the {@code Retry-After} when the store
 * knows it.
 *
 * @since 0.1.0
 */
public class IdempotencyStoreFullException extends IdempotencyStoreException {

	private final @Nullable Duration retryAfter;

	/**
	 * @param message what is full, and the setting to raise
	 * @param retryAfter how long until the oldest record that could make room expires, or
	 * {@code null} if no record would
	 */
	public IdempotencyStoreFullException(String message, @Nullable Duration retryAfter) {
		super(message);
		this.retryAfter = retryAfter;
	}

	/**
	 * How long until the oldest record that could make room expires: before then the
	 * store refuses the same request again. {@code null} when no expiry would make room.
	 */
	public @Nullable Duration retryAfter() {
		return this.retryAfter;
	}

}
