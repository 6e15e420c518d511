package dev.idempotency.store.seal;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import javax.crypto.Mac;
import javax.crypto.SecretKey;
import javax.crypto.spec.SecretKeySpec;

import org.jspecify.annotations.Nullable;

/**
 * {@link SealingKeys#of}: root keys given by id, each the root of a sealing key and a
 * fingerprint key of its own.
 */
final class ConfiguredSealingKeys implements SealingKeys {

	/** Bytes of an AES-256 key, and of each root key. */
	static final int KEY_BYTES = 32;

	private static final byte[] SEALING_LABEL = "dev.idempotency answer sealing key".getBytes(StandardCharsets.UTF_8);

	private static final byte[] FINGERPRINT_LABEL = "dev.idempotency request fingerprint key"
		.getBytes(StandardCharsets.UTF_8);

	private final Map<String, SecretKey> openingKeys;

	private final SealingKey sealingKey;

	private final List<SecretKey> fingerprintKeys;

	ConfiguredSealingKeys(Map<String, byte[]> rootKeys, String sealingKeyId) {
		Objects.requireNonNull(sealingKeyId, "sealingKeyId");
		if (!rootKeys.containsKey(sealingKeyId)) {
			throw new IllegalArgumentException(
					"the sealing key id '" + sealingKeyId + "' is not one of the keys " + rootKeys.keySet());
		}
		Map<String, SecretKey> opening = new LinkedHashMap<>();
		List<SecretKey> fingerprint = new ArrayList<>();
		rootKeys.forEach((id, root) -> {
			if (root.length != KEY_BYTES) {
				throw new IllegalArgumentException(
						"the key '" + id + "' has " + root.length + " bytes, not " + KEY_BYTES);
			}
			opening.put(id, new SecretKeySpec(expand(root, SEALING_LABEL), "AES"));
			SecretKey fingerprintKey = new SecretKeySpec(expand(root, FINGERPRINT_LABEL), "HmacSHA256");
			if (id.equals(sealingKeyId)) {
				fingerprint.add(0, fingerprintKey);
			}
			else {
				fingerprint.add(fingerprintKey);
			}
		});
		this.openingKeys = Collections.unmodifiableMap(opening);
		this.sealingKey = new SealingKey(sealingKeyId, Objects.requireNonNull(opening.get(sealingKeyId)));
		this.fingerprintKeys = List.copyOf(fingerprint);
	}

	@Override
	public SealingKey sealingKey() {
		return this.sealingKey;
	}

	@Override
	public @Nullable SecretKey openingKey(String id) {
		return this.openingKeys.get(id);
	}

	@Override
	public List<SecretKey> fingerprintKeys() {
		return this.fingerprintKeys;
	}

	/**
	 * HKDF-Expand (RFC 5869, section 2.3) of one block: HMAC-SHA256(root, label || 0x01),
	 * 32 bytes.
	 */
	private static byte[] expand(byte[] root, byte[] label) {
		try {
			Mac mac = Mac.getInstance("HmacSHA256");
			mac.init(new SecretKeySpec(root, "HmacSHA256"));
			mac.update(label);
			mac.update((byte) 1);
			return mac.doFinal();
		}
		catch (GeneralSecurityException ex) {
			throw new IllegalStateException("HmacSHA256 is required of every Java platform", ex);
		}
	}

	@Override
	public String toString() {
		return "SealingKeys[sealing=" + this.sealingKey.id() + ", opening=" + this.openingKeys.keySet() + "]";
	}

}
