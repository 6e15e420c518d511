package dev.idempotency.autoconfigure.redis;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Settings of the Redis idempotency store ({@code idempotency.store.type=redis}). The
 * connection itself is Spring Boot's ({@code spring.data.redis.*}).
 *
 * @since 0.1.0
 */
@ConfigurationProperties("idempotency.store.redis")
public class IdempotencyRedisStoreProperties {

	/**
	 * The store's command timeout when none is configured and the application's is
	 * longer.
	 */
	static final Duration DEFAULT_COMMAND_TIMEOUT = Duration.ofSeconds(2);

	/**
	 * Prefix of every key the store writes. Give each application (or environment)
	 * sharing a Redis its own prefix. Must not contain '{' or '}': the store appends its
	 * own hash tag, which decides the Redis Cluster slot of each record.
	 */
	private String keyPrefix = "idempotency:";

	/**
	 * How long one store call may wait for Redis before it fails (and the store-failure
	 * policy answers the request). With Lettuce the store uses its own connection, made
	 * from the application's connection factory's settings with this timeout. When not
	 * set: 2 seconds, or the application's own Redis command timeout if that is shorter.
	 */
	private @Nullable Duration commandTimeout;

	/**
	 * Replicas that must acknowledge a reservation the store acquired, a completion and a
	 * response recorded in record-after-success mode (Redis WAIT, after the script, on
	 * the same connection) before the store call returns; 0 (the default) waits for none.
	 * Narrows what a failover to a replica can lose; it does not make replication
	 * synchronous. A transition not acknowledged in time fails (the store-failure policy
	 * answers the request).
	 */
	private int replicasToAck;

	/**
	 * How long the store waits for replicas-to-ack acknowledgements. Keep it below the
	 * command timeout.
	 */
	private Duration replicasAckTimeout = Duration.ofMillis(500);

	/**
	 * What the start-up check of Redis's eviction settings does when Redis may evict the
	 * store's records under memory pressure (a maxmemory with any maxmemory-policy but
	 * noeviction): an evicted record lets a retry run its operation again, silently. warn
	 * logs a warning, fail refuses to start, off skips the check. A Redis whose CONFIG
	 * command is disabled or renamed (common on managed services) cannot be checked: that
	 * is logged at INFO level and the application starts.
	 */
	private EvictionCheck evictionCheck = EvictionCheck.WARN;

	/**
	 * Whether the store's own connection (with Lettuce) keeps the command observations
	 * (Micrometer tracing, as Spring Boot sets up with Actuator) and Lettuce's command
	 * latency recorder of the application's client resources. Off by default: the store
	 * already reports each call (idempotency.store.calls), and observing every script it
	 * sends more than doubled what the store allocated per request.
	 */
	private boolean observeCommands;

	public boolean isObserveCommands() {
		return this.observeCommands;
	}

	public void setObserveCommands(boolean observeCommands) {
		this.observeCommands = observeCommands;
	}

	public EvictionCheck getEvictionCheck() {
		return this.evictionCheck;
	}

	public void setEvictionCheck(EvictionCheck evictionCheck) {
		this.evictionCheck = evictionCheck;
	}

	public int getReplicasToAck() {
		return this.replicasToAck;
	}

	public void setReplicasToAck(int replicasToAck) {
		this.replicasToAck = replicasToAck;
	}

	public Duration getReplicasAckTimeout() {
		return this.replicasAckTimeout;
	}

	public void setReplicasAckTimeout(Duration replicasAckTimeout) {
		this.replicasAckTimeout = replicasAckTimeout;
	}

	public String getKeyPrefix() {
		return this.keyPrefix;
	}

	public void setKeyPrefix(String keyPrefix) {
		this.keyPrefix = keyPrefix;
	}

	public @Nullable Duration getCommandTimeout() {
		return this.commandTimeout;
	}

	public void setCommandTimeout(@Nullable Duration commandTimeout) {
		this.commandTimeout = commandTimeout;
	}

	/**
	 * What the start-up check of Redis's {@code maxmemory-policy} does when Redis may
	 * evict the store's records.
	 *
	 * @since 0.1.0
	 */
	public enum EvictionCheck {

		/** Log a warning and start. */
		WARN,

		/** Refuse to start. */
		FAIL,

		/** Do not check (no {@code CONFIG GET} at start-up). */
		OFF

	}

}
