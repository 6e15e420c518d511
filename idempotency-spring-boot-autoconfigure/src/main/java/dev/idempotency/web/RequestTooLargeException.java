package dev.idempotency.web;

/**
 * The body of a keyed request is larger than {@code idempotency.request.max-body-size}:
 * it is not read further, and the request is answered 413.
 */
final class RequestTooLargeException extends RuntimeException {

	private final long maxBytes;

	RequestTooLargeException(String message, long maxBytes) {
		super(message);
		this.maxBytes = maxBytes;
	}

	long maxBytes() {
		return this.maxBytes;
	}

}
