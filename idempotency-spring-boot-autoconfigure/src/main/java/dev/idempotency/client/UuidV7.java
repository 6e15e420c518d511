package dev.idempotency.client;

import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Makes RFC 9562 version 7 UUIDs: 48 bits of Unix milliseconds, then random bits. The
 * random bits come from {@link ThreadLocalRandom}: a key must be unique, not secret (the
 * server scopes it to the caller's principal).
 */
final class UuidV7 {

	private UuidV7() {
	}

	static String next(long epochMillis) {
		ThreadLocalRandom random = ThreadLocalRandom.current();
		long most = (epochMillis << 16) | 0x7000L | (random.nextLong() & 0x0FFFL);
		long least = (random.nextLong() & 0x3FFF_FFFF_FFFF_FFFFL) | 0x8000_0000_0000_0000L;
		return new UUID(most, least).toString();
	}

}
