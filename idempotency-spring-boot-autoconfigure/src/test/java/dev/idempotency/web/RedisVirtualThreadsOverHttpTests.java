package dev.idempotency.web;

import java.util.UUID;

import dev.idempotency.test.servers.SharedRedis;
import org.junit.jupiter.api.AfterAll;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * {@link VirtualThreadsOverHttpTests} on the shared Redis, under a key prefix of this
 * run's own.
 */
class RedisVirtualThreadsOverHttpTests extends VirtualThreadsOverHttpTests {

	private static final String PREFIX = "idem-vt-" + UUID.randomUUID() + ":";

	@DynamicPropertySource
	static void store(DynamicPropertyRegistry registry) {
		SharedRedis.storeProperties(registry, PREFIX);
	}

	@AfterAll
	static void deleteOwnKeys() {
		SharedRedis.deleteKeys(PREFIX);
	}

}
