package dev.idempotency.autoconfigure.redis;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Settings of the Redis idempotency store ({@code idempotency.store.type=redis}). The connection
 * itself is Spring Boot's ({@code spring.data.redis.*}).
 */
@ConfigurationProperties("idempotency.store.redis")
public class IdempotencyRedisStoreProperties {

	/**
	 * Prefix of every key the store writes. Give each application (or environment) sharing a
	 * Redis its own prefix. Must not contain '{' or '}': the store appends its own hash tag,
	 * which decides the Redis Cluster slot of each record.
	 */
	private String keyPrefix = "idempotency:";

	public String getKeyPrefix() {
		return this.keyPrefix;
	}

	public void setKeyPrefix(String keyPrefix) {
		this.keyPrefix = keyPrefix;
	}

}
