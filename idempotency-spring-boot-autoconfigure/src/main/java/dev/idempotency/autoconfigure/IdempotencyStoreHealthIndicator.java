package dev.idempotency.autoconfigure;

import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.RecordId;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * Reports whether the idempotency store answers: one read of a record that never exists,
 * up with the store's name as detail. Down (the read threw) means keyed requests are now
 * refused with 503 (fail-closed) or run unprotected (fail-open). Not final: the
 * class-based proxy of an application's aspect on every health indicator subclasses it.
 */
class IdempotencyStoreHealthIndicator extends AbstractHealthIndicator {

	private static final RecordId PROBE = new RecordId("health", "health-probe");

	private final IdempotencyStore store;

	IdempotencyStoreHealthIndicator(IdempotencyStore store) {
		super("Idempotency store health check failed");
		this.store = store;
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		this.store.find(PROBE);
		builder.up().withDetail("store", this.store.name());
	}

}
