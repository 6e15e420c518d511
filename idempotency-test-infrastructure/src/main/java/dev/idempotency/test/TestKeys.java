package dev.idempotency.test;

import java.security.SecureRandom;
import java.time.Instant;
import java.util.UUID;

/** Makes RFC 9562 UUIDv7 keys for tests, at any instant. */
public final class TestKeys {

	private static final SecureRandom RANDOM = new SecureRandom();

	private TestKeys() {
	}

	public static String newKey() {
		return at(Instant.now());
	}

	public static String at(Instant instant) {
		long millis = instant.toEpochMilli();
		long high = (millis << 16) | 0x7000L | (RANDOM.nextInt() & 0x0FFFL);
		long low = (RANDOM.nextLong() & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L;
		return new UUID(high, low).toString();
	}

}
