package dev.idempotency.web;

/**
 * How the HTTP door fingerprints an {@code application/json} or {@code +json} body.
 *
 * @since 0.1.0
 */
public enum JsonFingerprint {

	/** The bytes as sent: other member order or whitespace is another request. */
	BYTES,

	/**
	 * A canonical form: member order and whitespace do not count, numbers are compared by
	 * value ({@code 1.0} is {@code 1}), arrays keep their order. A body that is not valid
	 * JSON is compared as bytes.
	 */
	CANONICAL

}
