package dev.idempotency.core.internal;

import java.time.Instant;
import java.util.Locale;

import dev.idempotency.core.KeyFormat;
import org.jspecify.annotations.Nullable;

/**
 * A client's idempotency key in canonical form, in one of three formats: a UUIDv7 (RFC
 * 9562: 36 characters, version 7, variant {@code 0b10}, hex digits in any case, bare or
 * in the IETF draft's quoted form {@code "..."}); any RFC 9562 UUID (version 1 to 8, the
 * same form); or an opaque key of 1 to {@value #MAX_OPAQUE_LENGTH} visible ASCII
 * characters, taken as sent.
 * <p>
 * Internal: public because the engine, in another package, parses keys with it; not part
 * of the supported API (see docs/api.md).
 *
 * @param value the canonical key (lower-case for a UUID)
 * @param timestamp the UUIDv7's embedded creation time, or {@code null} for a key that
 * carries no time
 * @since 0.1.0
 */
public record IdempotencyKey(String value, @Nullable Instant timestamp) {

	/** Longest opaque key accepted. */
	public static final int MAX_OPAQUE_LENGTH = 255;

	private static final int UUID_LENGTH = 36;

	/**
	 * Parses a key as the format of its operation says.
	 * @throws InvalidIdempotencyKeyException with the reason in words
	 * @throws IllegalStateException for {@link KeyFormat#DEFAULT}, which the door
	 * resolves to a format
	 */
	static IdempotencyKey parse(String raw, KeyFormat format) {
		return switch (format) {
			case UUID_V7 -> parseUuidV7(raw);
			case UUID -> parseUuid(raw);
			case OPAQUE -> opaque(raw);
			case DEFAULT -> throw new IllegalStateException("IdempotentCall refuses DEFAULT");
		};
	}

	/**
	 * Parses a header value as a UUIDv7.
	 * @throws InvalidIdempotencyKeyException with the reason in words
	 */
	public static IdempotencyKey parseUuidV7(@Nullable String raw) {
		String canonical = uuidText(raw, "a UUIDv7");
		if (canonical.charAt(14) != '7') {
			throw new InvalidIdempotencyKeyException(
					"the key must be a version 7 UUID, got version " + canonical.charAt(14));
		}
		checkVariant(canonical);
		return new IdempotencyKey(canonical, uuidV7Time(canonical));
	}

	/**
	 * Parses a header value as any RFC 9562 UUID: version 1 to 8, variant {@code 0b10}. A
	 * UUIDv7 keeps its time, so the key-age window applies to it.
	 * @throws InvalidIdempotencyKeyException with the reason in words
	 */
	public static IdempotencyKey parseUuid(@Nullable String raw) {
		String canonical = uuidText(raw, "a UUID");
		char version = canonical.charAt(14);
		if (version < '1' || version > '8') {
			throw new InvalidIdempotencyKeyException(
					"the key must be an RFC 9562 UUID of version 1 to 8, got version " + version);
		}
		checkVariant(canonical);
		return new IdempotencyKey(canonical, (version == '7') ? uuidV7Time(canonical) : null);
	}

	/** The 36 characters of a UUID, unquoted, checked for form, in lower case. */
	private static String uuidText(@Nullable String raw, String what) {
		if (raw == null) {
			throw new InvalidIdempotencyKeyException("the key is missing");
		}
		String text = raw.strip();
		if (text.length() == UUID_LENGTH + 2 && text.charAt(0) == '"' && text.charAt(text.length() - 1) == '"') {
			text = text.substring(1, text.length() - 1);
		}
		if (text.length() != UUID_LENGTH) {
			throw new InvalidIdempotencyKeyException("the key must be " + what + " of 36 characters, got "
					+ Math.min(raw.length(), 10_000) + " characters");
		}
		for (int i = 0; i < UUID_LENGTH; i++) {
			char c = text.charAt(i);
			boolean dash = (i == 8 || i == 13 || i == 18 || i == 23);
			if (dash ? c != '-' : Character.digit(c, 16) < 0 || c > 'f') {
				throw new InvalidIdempotencyKeyException(
						"the key must be a UUID in 8-4-4-4-12 hexadecimal form (character " + (i + 1) + " is wrong)");
			}
		}
		return text.toLowerCase(Locale.ROOT);
	}

	private static void checkVariant(String canonical) {
		char variant = canonical.charAt(19);
		if (variant != '8' && variant != '9' && variant != 'a' && variant != 'b') {
			throw new InvalidIdempotencyKeyException("the key must be an RFC 9562 UUID (variant 10xx)");
		}
	}

	private static Instant uuidV7Time(String canonical) {
		// The first 48 bits: the 12 hexadecimal digits before the second dash, read in
		// place (checked already).
		long millis = 0;
		for (int i = 0; i < 13; i++) {
			if (i != 8) {
				millis = (millis << 4) | Character.digit(canonical.charAt(i), 16);
			}
		}
		return Instant.ofEpochMilli(millis);
	}

	/**
	 * Accepts an opaque key: 1 to {@value #MAX_OPAQUE_LENGTH} visible ASCII characters
	 * ({@code !} to {@code ~}), taken as sent: case counts, and quotes are part of it.
	 * @throws InvalidIdempotencyKeyException with the reason in words
	 */
	public static IdempotencyKey opaque(@Nullable String raw) {
		if (raw == null || raw.isEmpty()) {
			throw new InvalidIdempotencyKeyException("the key is empty");
		}
		if (raw.length() > MAX_OPAQUE_LENGTH) {
			throw new InvalidIdempotencyKeyException("the key is longer than " + MAX_OPAQUE_LENGTH + " characters (got "
					+ Math.min(raw.length(), 10_000) + ")");
		}
		for (int i = 0; i < raw.length(); i++) {
			char c = raw.charAt(i);
			if (c < 0x21 || c > 0x7e) {
				throw new InvalidIdempotencyKeyException(
						"the key may hold only visible ASCII characters ('!' to '~', no space), character " + (i + 1)
								+ " is not one");
			}
		}
		return new IdempotencyKey(raw, null);
	}

}
