package dev.idempotency.store;

/** The store could not carry out a transition (unreachable, full, failed). */
public class IdempotencyStoreException extends RuntimeException {

	public IdempotencyStoreException(String message) {
		super(message);
	}

	public IdempotencyStoreException(String message, Throwable cause) {
		super(message, cause);
	}

}
