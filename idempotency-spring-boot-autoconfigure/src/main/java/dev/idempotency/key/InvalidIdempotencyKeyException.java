package dev.idempotency.key;

/** A key that cannot be accepted; the message says why in words a client can act on. */
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
