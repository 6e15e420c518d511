package dev.idempotency.core;

import java.nio.charset.StandardCharsets;

import org.jspecify.annotations.Nullable;

/**
 * How {@link IdempotencyTemplate} stores a callback's result and reads it back for a
 * replay. A result is stored only after it was encoded and decoded again, so a retry
 * never finds a record it cannot answer with.
 *
 * @param <T> the result's type
 * @since 0.1.0
 */
public interface ResultCodec<T extends @Nullable Object> {

	/**
	 * The result as the bytes to store.
	 * @param result the callback's result
	 * @return its stored form
	 */
	byte[] encode(T result);

	/**
	 * A stored result, read back.
	 * @param stored what {@link #encode} returned
	 * @return the result
	 */
	T decode(byte[] stored);

	/**
	 * Strings as UTF-8; {@code null} is not stored.
	 * @return the codec
	 */
	static ResultCodec<String> utf8() {
		return new ResultCodec<>() {

			@Override
			public byte[] encode(String result) {
				return result.getBytes(StandardCharsets.UTF_8);
			}

			@Override
			public String decode(byte[] stored) {
				return new String(stored, StandardCharsets.UTF_8);
			}

		};
	}

}
