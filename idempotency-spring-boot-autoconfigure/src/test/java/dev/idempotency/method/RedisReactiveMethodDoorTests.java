package dev.idempotency.method;

import java.util.UUID;

import dev.idempotency.test.servers.SharedRedis;
import org.junit.jupiter.api.AfterAll;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * {@link ReactiveMethodDoorTests} on the shared Redis, under a key prefix of this run's
 * own: a blocking store, whose calls the door runs off the subscriber's non-blocking
 * thread (BlockHound is installed).
 */
class RedisReactiveMethodDoorTests extends ReactiveMethodDoorTests {

	private static final String PREFIX = "idem-reactive-method-" + UUID.randomUUID() + ":";

	@DynamicPropertySource
	static void store(DynamicPropertyRegistry registry) {
		SharedRedis.storeProperties(registry, PREFIX);
	}

	@AfterAll
	static void deleteOwnKeys() {
		SharedRedis.deleteKeys(PREFIX);
	}

}
