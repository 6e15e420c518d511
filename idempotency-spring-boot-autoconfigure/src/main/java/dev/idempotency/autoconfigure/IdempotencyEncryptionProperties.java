package dev.idempotency.autoconfigure;

import java.util.LinkedHashMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Stored answers sealed with AES-256-GCM and request fingerprints keyed with HMAC-SHA256,
 * under the {@code idempotency.encryption} prefix. A bean of
 * {@link dev.idempotency.store.seal.SealingKeys} replaces the keys listed here.
 *
 * @since 0.1.0
 */
@ConfigurationProperties("idempotency.encryption")
public class IdempotencyEncryptionProperties {

	/**
	 * Keys by id, each the base64 of 32 random bytes (openssl rand -base64 32). Every key
	 * listed opens the answers sealed under it and recognises the fingerprints keyed
	 * under it; sealing-key-id names the one that seals. Keep them out of the
	 * application's files (an environment variable, a secret store).
	 */
	private Map<String, String> keys = new LinkedHashMap<>();

	/**
	 * Id of the key (in keys) that seals the answers stored from now on and keys their
	 * fingerprints. Required when keys are listed.
	 */
	private @Nullable String sealingKeyId;

	/**
	 * Whether every stored answer must be sealed: an answer stored without sealing
	 * (before sealing was turned on, or written into the store by someone else) is then
	 * refused with 500 instead of replayed. Needs keys.
	 */
	private boolean requireSealed;

	public Map<String, String> getKeys() {
		return this.keys;
	}

	public void setKeys(Map<String, String> keys) {
		this.keys = keys;
	}

	public @Nullable String getSealingKeyId() {
		return this.sealingKeyId;
	}

	public void setSealingKeyId(@Nullable String sealingKeyId) {
		this.sealingKeyId = sealingKeyId;
	}

	public boolean isRequireSealed() {
		return this.requireSealed;
	}

	public void setRequireSealed(boolean requireSealed) {
		this.requireSealed = requireSealed;
	}

}
