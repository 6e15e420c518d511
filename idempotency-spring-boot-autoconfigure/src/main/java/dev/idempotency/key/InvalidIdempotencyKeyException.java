package dev.idempotency.key;

/** A key that cannot be accepted; the message says why in words a client can act on. */
public class InvalidIdempotencyKeyException extends IllegalArgumentException {

	public InvalidIdempotencyKeyException(String reason) {
		super(reason);
	}

}
