package dev.idempotency.web.keys;

import java.util.UUID;

import dev.idempotency.test.servers.SharedRedis;
import org.junit.jupiter.api.AfterAll;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * {@link KeyFormatsOverHttpTests} on the shared Redis, under a key prefix of this run's
 * own.
 */
class RedisKeyFormatsOverHttpTests extends KeyFormatsOverHttpTests {

	private static final String PREFIX = "idem-keys-" + UUID.randomUUID() + ":";

	@DynamicPropertySource
	static void store(DynamicPropertyRegistry registry) {
		SharedRedis.storeProperties(registry, PREFIX);
	}

	@AfterAll
	static void deleteOwnKeys() {
		SharedRedis.deleteKeys(PREFIX);
	}

}
