package dev.idempotency.actuate;

import java.util.UUID;

import dev.idempotency.test.servers.SharedRedis;
import org.junit.jupiter.api.AfterAll;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * {@link IdempotencyEndpointOverHttpTests} on the shared Redis, under a key prefix of
 * this run's own.
 */
class RedisIdempotencyEndpointOverHttpTests extends IdempotencyEndpointOverHttpTests {

	private static final String PREFIX = "idem-endpoint-" + UUID.randomUUID() + ":";

	@DynamicPropertySource
	static void store(DynamicPropertyRegistry registry) {
		SharedRedis.storeProperties(registry, PREFIX);
	}

	/** The Redis store finds a record by its key and scope only (docs/redis-store.md). */
	@Override
	protected boolean findsAKeyWithoutItsScope() {
		return false;
	}

	@AfterAll
	static void deleteOwnKeys() {
		SharedRedis.deleteKeys(PREFIX);
	}

}
