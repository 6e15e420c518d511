package dev.idempotency.web;

/**
 * The body of a keyed request is larger than {@code idempotency.request.max-body-size}:
 * it is not read further, and the request is answered 413.
 */
final class RequestTooLargeException extends RuntimeException {

	private final String message;

	private final long maxBytes;

	RequestTooLargeException(String message, long maxBytes) {
		super(message);
		this.message = message;
		this.maxBytes = maxBytes;
	}

	/** What was too large, never {@code null}. */
	@Override
	public String getMessage() {
		return this.message;
	}

	long maxBytes() {
		return this.maxBytes;
	}

}
