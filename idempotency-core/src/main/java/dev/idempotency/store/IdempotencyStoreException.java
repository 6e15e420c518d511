package dev.idempotency.store;

/**
 * The store could not carry out a transition (unreachable, full, failed).
 *
 * @since 0.1.0
 */
public class IdempotencyStoreException extends RuntimeException {

	public IdempotencyStoreException(String message) {
		super(message);
	}

	public IdempotencyStoreException(String message, Throwable cause) {
		super(message, cause);
	}

}
