package dev.idempotency.autoconfigure.redis;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Settings of the Redis idempotency store ({@code idempotency.store.type=redis}). The connection
 * itself is Spring Boot's ({@code spring.data.redis.*}).
 */
@ConfigurationProperties("idempotency.store.redis")
public class IdempotencyRedisStoreProperties {

	/** The store's command timeout when none is configured and the application's is longer. */
	static final Duration DEFAULT_COMMAND_TIMEOUT = Duration.ofSeconds(2);

	/**
	 * Prefix of every key the store writes. Give each application (or environment) sharing a
	 * Redis its own prefix. Must not contain '{' or '}': the store appends its own hash tag,
	 * which decides the Redis Cluster slot of each record.
	 */
	private String keyPrefix = "idempotency:";

	/**
	 * How long one store call may wait for Redis before it fails (and the store-failure policy
	 * answers the request). With Lettuce the store uses its own connection, made from the
	 * application's connection factory's settings with this timeout. When not set: 2 seconds, or
	 * the application's own Redis command timeout if that is shorter.
	 */
	private Duration commandTimeout;

	public String getKeyPrefix() {
		return this.keyPrefix;
	}

	public void setKeyPrefix(String keyPrefix) {
		this.keyPrefix = keyPrefix;
	}

	public Duration getCommandTimeout() {
		return this.commandTimeout;
	}

	public void setCommandTimeout(Duration commandTimeout) {
		this.commandTimeout = commandTimeout;
	}

}
