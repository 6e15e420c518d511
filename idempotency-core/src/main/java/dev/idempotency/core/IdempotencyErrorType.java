package dev.idempotency.core;

/**
 * Each cause for which the engine refuses to run or replay a request, with its default
 * status.
 *
 * @since 0.1.0
 */
public enum IdempotencyErrorType {

	/**
	 * The key header is malformed, repeated, not a UUIDv7, or outside the accepted time
	 * window.
	 */
	INVALID_KEY("invalid-key", "Invalid idempotency key", 400),

	/** The operation requires a key and the request has none. */
	KEY_REQUIRED("key-required", "Idempotency key required", 400),

	/** The key was already used for a different request (another fingerprint). */
	KEY_REUSED("key-reused", "Idempotency key reused with another request", 422),

	/**
	 * A request with the same key is still being processed. Status 409 or 503 by
	 * configuration.
	 */
	REQUEST_IN_FLIGHT("request-in-flight", "Request with this idempotency key is in progress", 409),

	/**
	 * The request body is larger than the front door reads to fingerprint a keyed request
	 * ({@code idempotency.request.max-body-size}); nothing was run.
	 */
	REQUEST_TOO_LARGE("request-too-large", "Request too large for an idempotency key", 413),

	/** The idempotency store cannot be reached; nothing was run. */
	STORE_UNAVAILABLE("store-unavailable", "Idempotency store unavailable", 503),

	/**
	 * The answer stored for the key failed its integrity check (it does not open, or is
	 * not sealed where it must be): it is not replayed and nothing was run.
	 */
	INTEGRITY_CHECK_FAILED("integrity-check-failed", "Stored answer failed its integrity check", 500);

	private final String slug;

	private final String title;

	private final int defaultStatus;

	IdempotencyErrorType(String slug, String title, int defaultStatus) {
		this.slug = slug;
		this.title = title;
		this.defaultStatus = defaultStatus;
	}

	/** A short stable identifier, used in problem {@code type} URIs. */
	public String slug() {
		return this.slug;
	}

	/** A short human-readable summary. */
	public String title() {
		return this.title;
	}

	/** The status used unless configuration says otherwise. */
	public int defaultStatus() {
		return this.defaultStatus;
	}

}
