package dev.idempotency.core;

/**
 * Thrown by {@link IdempotencyTemplate#execute} instead of running the callback: the key
 * is malformed, was used with another request, belongs to a call still running, or the
 * store is unavailable. {@link #error()} says which, with the HTTP status, the reason and
 * when to retry, as the HTTP door answers it.
 *
 * @since 0.1.0
 */
public class IdempotencyErrorException extends RuntimeException {

	private final IdempotencyError error;

	/**
	 * @param error why the call was refused
	 */
	public IdempotencyErrorException(IdempotencyError error) {
		super(error.type().title() + ": " + error.detail());
		this.error = error;
	}

	/** Why the call was refused. */
	public IdempotencyError error() {
		return this.error;
	}

}
