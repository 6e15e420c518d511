package dev.idempotency.core;

/**
 * How an idempotency key is validated: the value of {@code idempotency.key.format}, of
 * {@code @Idempotent(keyFormat = ...)} and of {@link IdempotentRequest#keyFormat()}.
 *
 * @since 0.1.0
 */
public enum KeyFormat {

	/**
	 * No format of its own: the one configured for the door. On
	 * {@code @Idempotent(keyFormat = ...)}, {@code idempotency.key.format} for the header
	 * (HTTP door) and {@link #OPAQUE} for a key expression (method door); as
	 * {@code idempotency.key.format}, {@link #UUID_V7}; on an {@link IdempotentRequest},
	 * {@link #OPAQUE}.
	 */
	DEFAULT,

	/**
	 * An RFC 9562 UUIDv7, its time checked against the key-age window (the Iceberg rule,
	 * the HTTP door's default).
	 */
	UUID_V7,

	/**
	 * Any RFC 9562 UUID (version 1 to 8); a UUIDv7 among them has its time checked
	 * against the key-age window, the others carry no time.
	 */
	UUID,

	/**
	 * 1 to 255 visible ASCII characters, taken as sent; no key-age window (the method
	 * door's and the template's default).
	 */
	OPAQUE;

	/**
	 * This format, or {@code fallback} if this is {@link #DEFAULT}.
	 * @param fallback the format that {@link #DEFAULT} stands for
	 * @return a format other than {@link #DEFAULT} if {@code fallback} is one
	 */
	public KeyFormat orElse(KeyFormat fallback) {
		return (this != DEFAULT) ? this : fallback;
	}

}
