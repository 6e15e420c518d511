package dev.idempotency.core.internal;

/**
 * A key that cannot be accepted; the message says why in words a client can act on.
 * <p>
 * Internal: the engine turns it into a {@code 400 invalid-key} answer, so callers never
 * see it; public because the engine is in another package (see docs/api.md).
 *
 * @since 0.1.0
 */
public class InvalidIdempotencyKeyException extends IllegalArgumentException {

	private final String reason;

	public InvalidIdempotencyKeyException(String reason) {
		super(reason);
		this.reason = reason;
	}

	/** Why the key is not accepted, never {@code null}. */
	@Override
	public String getMessage() {
		return this.reason;
	}

}
