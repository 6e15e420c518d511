package dev.idempotency.autoconfigure.internal;

import java.time.Duration;

/**
 * The longest one call of the configured store may take, as its auto-configuration knows
 * it, for the start-up check that a running owner's lease outlives a heartbeat that waits
 * that long ({@code IdempotencyPropertiesValidator}). A bean of the JDBC and Redis store
 * auto-configurations; the in-memory store has none.
 *
 * @param property the property that sets it, such as
 * {@code idempotency.store.jdbc.query-timeout}
 * @param timeout the timeout as the store applies it; zero or negative for none (a call
 * may then wait for ever)
 * @param defaultTimeout the property's default
 * @since 0.1.0
 */
public record IdempotencyStoreTimeout(String property, Duration timeout, Duration defaultTimeout) {

	/** Whether a call is bounded at all. */
	public boolean bounded() {
		return !this.timeout.isNegative() && !this.timeout.isZero();
	}

}
