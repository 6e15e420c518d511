package dev.idempotency.store.seal;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import javax.crypto.SecretKey;

import org.jspecify.annotations.Nullable;

/**
 * Where the keys come from that seal stored answers (AES-256-GCM) and key request
 * fingerprints (HMAC-SHA256). The starter makes one of
 * {@code idempotency.encryption.keys} ({@link #of}); an application's bean of this type
 * replaces it, so that keys kept in a KMS or in Vault plug in. In an envelope scheme, for
 * instance, the id of the sealing key is its data key as the KMS wrapped it: each answer
 * carries it, and {@link #openingKey(String)} has the KMS unwrap it (once, then from a
 * cache).
 * <p>
 * The engine seals and opens; an implementation only says which key. Its keys must be AES
 * keys of 32 bytes.
 *
 * @since 0.1.0
 */
public interface SealingKeys {

	/** Longest key id, in UTF-8 bytes, that an answer may carry. */
	int MAX_KEY_ID_BYTES = 1024;

	/**
	 * The key that seals the answers stored from now on, with the id kept beside each of
	 * them. Called once per stored answer: keep a key that a remote service gave in a
	 * cache.
	 * @return the key and its id
	 */
	SealingKey sealingKey();

	/**
	 * The key that opens answers sealed under {@code id}. Called once per replay: keep a
	 * key that a remote service gave in a cache.
	 * @param id the id an answer carries
	 * @return the key, or {@code null} for an id this application does not know (the
	 * answer then fails its integrity check)
	 * @throws RuntimeException when it cannot tell now (a KMS out of reach): the call is
	 * then answered as a store failure ({@code idempotency.store.failure-mode})
	 */
	@Nullable SecretKey openingKey(String id);

	/**
	 * The keys of request fingerprints, read once when the engine is made. The first keys
	 * the fingerprint of every new record; each one is tried on a record whose
	 * fingerprint differs, so that a retry made across a rotation is recognised as the
	 * same request. Empty: fingerprints stay unkeyed SHA-256, which an outsider who sees
	 * one can guess a low-entropy field of the request from.
	 * @return the keys, the one in use first
	 */
	List<SecretKey> fingerprintKeys();

	/**
	 * The keys as the starter's {@code idempotency.encryption.keys} give them: each root
	 * key of 32 bytes yields two keys of its own by HKDF-SHA256 (RFC 5869's expand step,
	 * the root key being random already), one that seals answers and one that keys
	 * fingerprints, so that no key serves two algorithms. Every root key opens answers
	 * sealed under it and recognises fingerprints keyed under it; the one named by
	 * {@code sealingKeyId} seals and keys the new ones.
	 * @param rootKeys the keys by id, 32 bytes each
	 * @param sealingKeyId the id of the key that seals
	 * @return the keys
	 * @throws IllegalArgumentException if a key is not 32 bytes, an id is empty or too
	 * long, or {@code sealingKeyId} is not one of the ids (the message holds no key)
	 */
	static SealingKeys of(Map<String, byte[]> rootKeys, String sealingKeyId) {
		return new ConfiguredSealingKeys(rootKeys, sealingKeyId);
	}

	/**
	 * The key that seals, with its id.
	 *
	 * @param id kept in clear beside each answer it seals, so that the answer finds its
	 * key again; 1 to {@value SealingKeys#MAX_KEY_ID_BYTES} bytes of UTF-8
	 * @param key an AES key of 32 bytes
	 */
	record SealingKey(String id, SecretKey key) {

		public SealingKey {
			Objects.requireNonNull(id, "id");
			Objects.requireNonNull(key, "key");
			int idBytes = id.getBytes(StandardCharsets.UTF_8).length;
			if (idBytes == 0 || idBytes > MAX_KEY_ID_BYTES) {
				throw new IllegalArgumentException(
						"a sealing key id has 1 to " + MAX_KEY_ID_BYTES + " bytes of UTF-8, this one " + idBytes);
			}
		}

		@Override
		public String toString() {
			return "SealingKey[id=" + this.id + "]";
		}

	}

}
