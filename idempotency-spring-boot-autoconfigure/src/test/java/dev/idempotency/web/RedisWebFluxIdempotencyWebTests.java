package dev.idempotency.web;

import java.util.UUID;

import dev.idempotency.test.servers.SharedRedis;
import org.junit.jupiter.api.AfterAll;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * {@link WebFluxIdempotencyWebTests} on the shared Redis, under a key prefix of this
 * run's own: the store's blocking calls run off the event loop (BlockHound is installed).
 */
class RedisWebFluxIdempotencyWebTests extends WebFluxIdempotencyWebTests {

	private static final String PREFIX = "idem-webflux-" + UUID.randomUUID() + ":";

	@DynamicPropertySource
	static void store(DynamicPropertyRegistry registry) {
		SharedRedis.storeProperties(registry, PREFIX);
	}

	@AfterAll
	static void deleteOwnKeys() {
		SharedRedis.deleteKeys(PREFIX);
	}

}
