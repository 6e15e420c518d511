package dev.idempotency.aspect;

import dev.idempotency.engine.IdempotencyError;

/**
 * Thrown by an {@link dev.idempotency.Idempotent @Idempotent} bean method instead of running it:
 * the key is invalid or missing, was reused with other arguments, is still in flight, or the store
 * is unavailable. {@link #error()} says which, with the status an HTTP caller would answer with.
 */
public class IdempotencyRejectedException extends RuntimeException {

	private final transient IdempotencyError error;

	public IdempotencyRejectedException(IdempotencyError error) {
		super(error.type().title() + ": " + error.detail());
		this.error = error;
	}

	public IdempotencyError error() {
		return this.error;
	}

}
