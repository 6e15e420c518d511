package dev.idempotency.store.seal;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;

import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.Mac;
import javax.crypto.SecretKey;
import javax.crypto.spec.GCMParameterSpec;

import dev.idempotency.store.RecordId;
import dev.idempotency.store.StoredResponse;
import dev.idempotency.store.StoredResponseCodec;
import dev.idempotency.store.StoredResponseIntegrityException;
import org.jspecify.annotations.Nullable;

/**
 * How the engine seals stored answers and keys request fingerprints, the same for every
 * store and both doors. Without keys ({@link #none()}) answers are stored as they are,
 * and a sealed one found in the store fails its integrity check.
 * <p>
 * <b>A sealed answer</b> is the answer's {@link StoredResponseCodec encoded form}
 * (status, headers and body, deflated when that is smaller) encrypted with AES-256-GCM
 * under the {@link SealingKeys#sealingKey() sealing key}, with a fresh random 96-bit
 * nonce per answer. What the store keeps is the format byte {@code 3}, the key id (its
 * length in two bytes, then UTF-8), the nonce, and the ciphertext with its 128-bit tag.
 * The associated data binds it to its record: the format byte, the key id, the record's
 * scope and its key, each length-prefixed. An answer altered, or moved under another
 * record (another key, another scope), does not open. The store sees the length of an
 * answer, not its content.
 * <p>
 * <b>A keyed fingerprint</b> is HMAC-SHA256, under the first
 * {@link SealingKeys#fingerprintKeys() fingerprint key}, of the request's fingerprint
 * (itself the SHA-256 of the request), in hex: neither the store nor the
 * {@code idempotency} endpoint then offers an offline guess of a field of the request.
 *
 * @since 0.1.0
 */
public final class Sealing {

	private static final Sealing NONE = new Sealing(null, List.of(), false);

	private static final String CIPHER = "AES/GCM/NoPadding";

	private static final int NONCE_BYTES = 12;

	private static final int TAG_BITS = 128;

	private static final byte FORMAT_SEALED = 3;

	private final @Nullable SealingKeys keys;

	/** Prototypes, one per fingerprint key, the one in use first. */
	private final List<Mac> fingerprintMacs;

	private final boolean requireSealed;

	private final SecureRandom random = new SecureRandom();

	private Sealing(@Nullable SealingKeys keys, List<Mac> fingerprintMacs, boolean requireSealed) {
		this.keys = keys;
		this.fingerprintMacs = fingerprintMacs;
		this.requireSealed = requireSealed;
	}

	/**
	 * Nothing sealed, nothing keyed: answers are stored as they are, fingerprints are
	 * SHA-256.
	 * @return the sealing that seals nothing
	 */
	public static Sealing none() {
		return NONE;
	}

	/**
	 * Every answer sealed and every fingerprint keyed under {@code keys}. Asks for the
	 * sealing key and the fingerprint keys once now, so that a key that cannot work fails
	 * here rather than on the first request.
	 * @param keys where the keys come from
	 * @param requireSealed whether an answer stored without sealing (before sealing was
	 * turned on, or put into the store by someone else) fails its integrity check instead
	 * of being replayed
	 * @return the sealing
	 * @throws IllegalArgumentException if the sealing key is not an AES key of 32 bytes
	 * or a fingerprint key is unfit for HMAC-SHA256
	 */
	public static Sealing of(SealingKeys keys, boolean requireSealed) {
		Objects.requireNonNull(keys, "keys");
		SealingKeys.SealingKey sealingKey = Objects.requireNonNull(keys.sealingKey(), "sealingKey()");
		checkAesKey(sealingKey.key(), "the sealing key '" + sealingKey.id() + "'");
		List<Mac> macs = new ArrayList<>();
		for (SecretKey key : keys.fingerprintKeys()) {
			try {
				Mac mac = Mac.getInstance("HmacSHA256");
				mac.init(key);
				macs.add(mac);
			}
			catch (GeneralSecurityException ex) {
				throw new IllegalArgumentException("a fingerprint key cannot key HmacSHA256: " + ex.getMessage(), ex);
			}
		}
		return new Sealing(keys, List.copyOf(macs), requireSealed);
	}

	/** Whether answers are sealed. */
	public boolean seals() {
		return this.keys != null;
	}

	/** Whether fingerprints are keyed. */
	public boolean keysFingerprints() {
		return !this.fingerprintMacs.isEmpty();
	}

	/** Whether an answer stored without sealing fails its integrity check. */
	public boolean requiresSealed() {
		return this.requireSealed;
	}

	/**
	 * The answer as a store keeps it: sealed for {@code id}, or as it is without keys.
	 * @param id the record the answer is stored under
	 * @param response the answer
	 * @return the answer to hand to the store
	 * @throws IllegalStateException if the sealing key cannot seal
	 */
	public StoredResponse seal(RecordId id, StoredResponse response) {
		SealingKeys keys = this.keys;
		if (keys == null) {
			return response;
		}
		SealingKeys.SealingKey sealingKey = keys.sealingKey();
		byte[] keyId = sealingKey.id().getBytes(StandardCharsets.UTF_8);
		byte[] nonce = new byte[NONCE_BYTES];
		this.random.nextBytes(nonce);
		byte[] plaintext = StoredResponseCodec.encode(response);
		try {
			Cipher cipher = Cipher.getInstance(CIPHER);
			cipher.init(Cipher.ENCRYPT_MODE, sealingKey.key(), new GCMParameterSpec(TAG_BITS, nonce));
			cipher.updateAAD(associatedData(keyId, id));
			ByteBuffer envelope = ByteBuffer
				.allocate(2 + keyId.length + NONCE_BYTES + cipher.getOutputSize(plaintext.length));
			envelope.putShort((short) keyId.length).put(keyId).put(nonce);
			cipher.doFinal(ByteBuffer.wrap(plaintext), envelope);
			return StoredResponseCodec.sealed(envelope.array());
		}
		catch (GeneralSecurityException ex) {
			throw new IllegalStateException("The answer cannot be sealed under the key '" + sealingKey.id() + "'", ex);
		}
	}

	/**
	 * The answer a store returned, opened: a sealed one decrypted and checked against
	 * {@code id}, one stored as it is returned as it is (unless every answer must be
	 * sealed).
	 * @param id the record the store returned it for
	 * @param stored the answer as the store returned it
	 * @return the answer to replay
	 * @throws StoredResponseIntegrityException if it does not open, or is not sealed
	 * where it must be
	 */
	public StoredResponse open(RecordId id, StoredResponse stored) {
		if (!StoredResponseCodec.isSealed(stored)) {
			if (this.requireSealed) {
				throw failure(id, "it is not sealed, and every stored answer must be"
						+ " (idempotency.encryption.require-sealed)", null);
			}
			return stored;
		}
		SealingKeys keys = this.keys;
		if (keys == null) {
			throw failure(id, "it is sealed, and no key to open it is configured (idempotency.encryption.keys)", null);
		}
		ByteBuffer envelope = ByteBuffer.wrap(stored.body());
		int keyIdLength = (envelope.remaining() >= 2) ? Short.toUnsignedInt(envelope.getShort()) : -1;
		if (keyIdLength < 0 || envelope.remaining() < keyIdLength + NONCE_BYTES + TAG_BITS / 8) {
			throw failure(id, "its envelope is truncated", null);
		}
		byte[] keyId = new byte[keyIdLength];
		envelope.get(keyId);
		String keyName = shown(new String(keyId, StandardCharsets.UTF_8));
		SecretKey key = keys.openingKey(new String(keyId, StandardCharsets.UTF_8));
		if (key == null) {
			throw failure(id, "it is sealed under the key '" + keyName + "', which is not configured", null);
		}
		byte[] nonce = new byte[NONCE_BYTES];
		envelope.get(nonce);
		byte[] plaintext;
		try {
			Cipher cipher = Cipher.getInstance(CIPHER);
			cipher.init(Cipher.DECRYPT_MODE, key, new GCMParameterSpec(TAG_BITS, nonce));
			cipher.updateAAD(associatedData(keyId, id));
			plaintext = cipher.doFinal(stored.body(), envelope.position(), envelope.remaining());
		}
		catch (AEADBadTagException ex) {
			throw failure(id,
					"it does not authenticate under the key '" + keyName
							+ "': it was altered, moved from another record, or sealed under another key of that id",
					null);
		}
		catch (GeneralSecurityException ex) {
			throw failure(id, "it cannot be opened under the key '" + keyName + "': " + ex.getMessage(), ex);
		}
		StoredResponse opened;
		try {
			opened = StoredResponseCodec.decode(plaintext);
		}
		catch (StoredResponseIntegrityException ex) {
			throw failure(id, "what it seals is not an answer (" + ex.getMessage() + ")", ex);
		}
		if (StoredResponseCodec.isSealed(opened)) {
			throw failure(id, "it is sealed twice", null);
		}
		return opened;
	}

	/**
	 * The fingerprint a record keeps for a request: keyed under the first fingerprint
	 * key, or as it is without one.
	 * @param fingerprint the request's fingerprint (the SHA-256 a door computes)
	 * @return what the record keeps
	 */
	public String fingerprint(String fingerprint) {
		return this.fingerprintMacs.isEmpty() ? fingerprint : keyed(this.fingerprintMacs.get(0), fingerprint);
	}

	/**
	 * The other fingerprints a record of the same request may keep: keyed under each of
	 * the other fingerprint keys (a record made before a rotation), and as it is (a
	 * record made before fingerprints were keyed). Empty without fingerprint keys.
	 * @param fingerprint the request's fingerprint (the SHA-256 a door computes)
	 * @return those fingerprints
	 */
	public List<String> otherFingerprints(String fingerprint) {
		if (this.fingerprintMacs.isEmpty()) {
			return List.of();
		}
		List<String> others = new ArrayList<>(this.fingerprintMacs.size());
		for (int i = 1; i < this.fingerprintMacs.size(); i++) {
			others.add(keyed(this.fingerprintMacs.get(i), fingerprint));
		}
		others.add(fingerprint);
		return others;
	}

	private static String keyed(Mac prototype, String fingerprint) {
		Mac mac;
		try {
			mac = (Mac) prototype.clone();
		}
		catch (CloneNotSupportedException ex) {
			throw new IllegalStateException("HmacSHA256 of " + prototype.getProvider() + " cannot be cloned", ex);
		}
		return HexFormat.of().formatHex(mac.doFinal(fingerprint.getBytes(StandardCharsets.UTF_8)));
	}

	/**
	 * The format byte, the key id and the record's scope and key, each with its length:
	 * no two records or key ids share it.
	 */
	private static byte[] associatedData(byte[] keyId, RecordId id) {
		byte[] scope = id.scope().getBytes(StandardCharsets.UTF_8);
		byte[] key = id.key().getBytes(StandardCharsets.UTF_8);
		return ByteBuffer.allocate(1 + 4 + keyId.length + 4 + scope.length + 4 + key.length)
			.put(FORMAT_SEALED)
			.putInt(keyId.length)
			.put(keyId)
			.putInt(scope.length)
			.put(scope)
			.putInt(key.length)
			.put(key)
			.array();
	}

	private static void checkAesKey(SecretKey key, String which) {
		byte[] encoded = key.getEncoded();
		if (!"AES".equalsIgnoreCase(key.getAlgorithm()) || (encoded != null && encoded.length != 32)) {
			throw new IllegalArgumentException(which + " must be an AES key of 32 bytes (AES-256), was "
					+ key.getAlgorithm() + ((encoded != null) ? " of " + encoded.length + " bytes" : ""));
		}
	}

	/** A key id as a message shows it: a long one (a wrapped data key) shortened. */
	private static String shown(String keyId) {
		return (keyId.length() <= 40) ? keyId : keyId.substring(0, 40) + "...";
	}

	private static StoredResponseIntegrityException failure(RecordId id, String reason, @Nullable Throwable cause) {
		return new StoredResponseIntegrityException(id, reason, cause);
	}

	@Override
	public String toString() {
		return "Sealing[" + ((this.keys != null) ? this.keys : "none") + ", requireSealed=" + this.requireSealed + "]";
	}

}
