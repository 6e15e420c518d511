package dev.idempotency.autoconfigure;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code idempotency.request} observation of each protected call, under the
 * {@code idempotency.observation} prefix.
 *
 * @since 0.1.0
 */
@ConfigurationProperties("idempotency.observation")
public class IdempotencyObservationProperties {

	/**
	 * Whether the observation carries the high-cardinality key idempotency.key.hash: the
	 * first 16 hex digits of the SHA-256 of the key (as the engine keeps it: a UUID in
	 * lower case), so that a trace can be found from a key. The key itself is never a
	 * tag.
	 */
	private boolean keyHash;

	public boolean isKeyHash() {
		return this.keyHash;
	}

	public void setKeyHash(boolean keyHash) {
		this.keyHash = keyHash;
	}

}
