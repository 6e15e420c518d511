package dev.idempotency.autoconfigure;

import java.lang.reflect.Proxy;

import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.IdempotencyStoreException;
import org.junit.jupiter.api.Test;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The store's health: up with the store's name while a read answers, down with the
 * store's failure (a missing JDBC table names the table) when it throws.
 */
class IdempotencyStoreHealthIndicatorTests {

	@Test
	void aStoreThatAnswersIsUpWithItsName() {
		Health health = new IdempotencyStoreHealthIndicator(store(null)).health();
		assertThat(health.getStatus()).isEqualTo(Status.UP);
		assertThat(health.getDetails()).containsEntry("store", "probe");
	}

	@Test
	void aStoreThatFailsIsDownWithItsFailureAsTheErrorDetail() {
		IdempotencyStoreException failure = new IdempotencyStoreException(
				"Idempotency store failed to find a record: table no_such_table not found (or not the starter's schema)");
		Health health = new IdempotencyStoreHealthIndicator(store(failure)).health();
		assertThat(health.getStatus()).isEqualTo(Status.DOWN);
		assertThat(String.valueOf(health.getDetails().get("error"))).contains("table no_such_table not found");
	}

	/** A store named probe whose find returns nothing, or throws the given failure. */
	private static IdempotencyStore store(IdempotencyStoreException failure) {
		return (IdempotencyStore) Proxy.newProxyInstance(IdempotencyStore.class.getClassLoader(),
				new Class<?>[] { IdempotencyStore.class }, (proxy, method, args) -> switch (method.getName()) {
					case "name" -> "probe";
					case "find" -> {
						if (failure != null) {
							throw failure;
						}
						yield java.util.Optional.empty();
					}
					default -> throw new UnsupportedOperationException(method.getName());
				});
	}

}
