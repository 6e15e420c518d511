package dev.idempotency.store.seal;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import javax.crypto.SecretKey;
import javax.crypto.spec.SecretKeySpec;

import dev.idempotency.core.internal.Fingerprints;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.StoredResponse;
import dev.idempotency.store.StoredResponseCodec;
import dev.idempotency.store.StoredResponseIntegrityException;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.assertj.core.api.Assertions.assertThatNoException;

/**
 * {@link Sealing} on its own: what an envelope holds, each way of altering one, and the
 * keyed fingerprints.
 */
class SealingTests {

	private static final RecordId ID = new RecordId("user:alice", "0190f2a4-7c1e-7d3a-9b2f-4c5d6e7f8a9b");

	private static final StoredResponse ANSWER = new StoredResponse(201,
			Map.of("Content-Type", List.of("application/json")),
			"{\"card\":\"4111 1111 1111 1111\"}".getBytes(StandardCharsets.UTF_8));

	private final Sealing sealing = Sealing.of(SealingKeys.of(keys("k1"), "k1"), false);

	@Test
	void eachAnswerIsSealedUnderAFreshNonceAndOpensToItselfOnlyForItsRecord() {
		StoredResponse sealed = this.sealing.seal(ID, ANSWER);
		StoredResponse again = this.sealing.seal(ID, ANSWER);
		assertThat(StoredResponseCodec.isSealed(sealed)).isTrue();
		assertThat(sealed.body()).as("another nonce, another ciphertext").isNotEqualTo(again.body());
		// Key id (2 + 2 bytes), nonce (12), the encoded answer, the tag (16).
		assertThat(sealed.body()).hasSize(4 + 12 + StoredResponseCodec.encode(ANSWER).length + 16);
		assertThat(this.sealing.open(ID, sealed)).isEqualTo(ANSWER);
		assertThat(this.sealing.open(ID, again)).isEqualTo(ANSWER);
		assertThat(StoredResponseCodec.decode(StoredResponseCodec.encode(sealed))).as("kept as it is by a store")
			.isEqualTo(sealed);
		assertThatExceptionOfType(StoredResponseIntegrityException.class)
			.isThrownBy(() -> this.sealing.open(new RecordId(ID.scope(), "another-key"), sealed))
			.withMessageContaining("does not authenticate under the key 'k1'")
			.satisfies((ex) -> assertThat(ex.recordId()).isEqualTo(new RecordId(ID.scope(), "another-key")));
		assertThatExceptionOfType(StoredResponseIntegrityException.class)
			.isThrownBy(() -> this.sealing.open(new RecordId("user:bob", ID.key()), sealed));
	}

	@Test
	void anyByteChangedMakesTheAnswerFailItsIntegrityCheck() {
		byte[] envelope = this.sealing.seal(ID, ANSWER).body();
		for (int i = 0; i < envelope.length; i++) {
			byte[] altered = envelope.clone();
			altered[i] ^= 0x01;
			assertThatExceptionOfType(StoredResponseIntegrityException.class).as("byte " + i)
				.isThrownBy(() -> this.sealing.open(ID, StoredResponseCodec.sealed(altered)));
		}
		assertThatExceptionOfType(StoredResponseIntegrityException.class)
			.isThrownBy(() -> this.sealing.open(ID, StoredResponseCodec.sealed(Arrays.copyOf(envelope, 20))))
			.withMessageContaining("truncated");
		assertThatExceptionOfType(StoredResponseIntegrityException.class)
			.isThrownBy(() -> this.sealing.open(ID, StoredResponseCodec.sealed(new byte[0])))
			.withMessageContaining("truncated");
	}

	@Test
	void anAnswerSealedUnderAKeyNotConfiguredSaysWhichKey() {
		StoredResponse sealed = this.sealing.seal(ID, ANSWER);
		Sealing other = Sealing.of(SealingKeys.of(keys("k2"), "k2"), false);
		assertThatExceptionOfType(StoredResponseIntegrityException.class).isThrownBy(() -> other.open(ID, sealed))
			.withMessage("it is sealed under the key 'k1', which is not configured");
		assertThatExceptionOfType(StoredResponseIntegrityException.class)
			.isThrownBy(() -> Sealing.none().open(ID, sealed))
			.withMessageContaining("no key to open it is configured");
		Map<String, byte[]> sameIdOtherKey = new LinkedHashMap<>();
		sameIdOtherKey.put("k1", keys("k2").get("k2"));
		assertThatExceptionOfType(StoredResponseIntegrityException.class)
			.isThrownBy(() -> Sealing.of(SealingKeys.of(sameIdOtherKey, "k1"), false).open(ID, sealed))
			.withMessageContaining("does not authenticate");
	}

	@Test
	void aPlainAnswerIsReplayedAsItIsUnlessEveryAnswerMustBeSealed() {
		assertThat(this.sealing.open(ID, ANSWER)).isSameAs(ANSWER);
		Sealing strict = Sealing.of(SealingKeys.of(keys("k1"), "k1"), true);
		assertThatExceptionOfType(StoredResponseIntegrityException.class).isThrownBy(() -> strict.open(ID, ANSWER))
			.withMessageContaining("idempotency.encryption.require-sealed");
		assertThat(strict.open(ID, strict.seal(ID, ANSWER))).isEqualTo(ANSWER);
		assertThat(Sealing.none().seal(ID, ANSWER)).isSameAs(ANSWER);
	}

	@Test
	void fingerprintsAreKeyedUnderTheSealingKeysOwnFingerprintKeyAndTheOthersAreRecognised() {
		String plain = Fingerprints.method("placeOrder", "{\"pin\":\"1234\"}".getBytes(StandardCharsets.UTF_8));
		Sealing rotated = Sealing.of(SealingKeys.of(keys("k1", "k2"), "k2"), false);
		Sealing afterRemoval = Sealing.of(SealingKeys.of(keys("k2"), "k2"), false);

		assertThat(this.sealing.fingerprint(plain)).matches("[0-9a-f]{64}").isNotEqualTo(plain);
		assertThat(rotated.fingerprint(plain)).isEqualTo(afterRemoval.fingerprint(plain))
			.isNotEqualTo(this.sealing.fingerprint(plain));
		assertThat(rotated.otherFingerprints(plain)).containsExactly(this.sealing.fingerprint(plain), plain);
		assertThat(afterRemoval.otherFingerprints(plain)).containsExactly(plain);
		assertThat(Sealing.none().fingerprint(plain)).isEqualTo(plain);
		assertThat(Sealing.none().otherFingerprints(plain)).isEmpty();
	}

	@Test
	void keysThatCannotWorkAreRefusedWhenTheSealingIsMade() {
		assertThatIllegalArgumentException().isThrownBy(() -> SealingKeys.of(Map.of("k1", new byte[16]), "k1"))
			.withMessage("the key 'k1' has 16 bytes, not 32");
		assertThatIllegalArgumentException().isThrownBy(() -> SealingKeys.of(keys("k1"), "k2"))
			.withMessage("the sealing key id 'k2' is not one of the keys [k1]");
		SealingKeys aes128 = new SealingKeys() {

			@Override
			public SealingKey sealingKey() {
				return new SealingKey("short", new SecretKeySpec(new byte[16], "AES"));
			}

			@Override
			public @Nullable SecretKey openingKey(String id) {
				return null;
			}

			@Override
			public List<SecretKey> fingerprintKeys() {
				return List.of();
			}

		};
		assertThatIllegalArgumentException().isThrownBy(() -> Sealing.of(aes128, false))
			.withMessage("the sealing key 'short' must be an AES key of 32 bytes (AES-256), was AES of 16 bytes");
	}

	/**
	 * The engine reaches its store only through a {@link SealingStore}: a method of the
	 * store SPI that it does not override (a default method added to the SPI) would reach
	 * the store beneath without sealing, or fail where that store would answer.
	 */
	@Test
	void theSealingStoreOverridesEveryMethodOfTheStoreSpi() {
		for (Method method : IdempotencyStore.class.getMethods()) {
			if (Modifier.isStatic(method.getModifiers())) {
				continue;
			}
			assertThatNoException().as(method.toString())
				.isThrownBy(() -> SealingStore.class.getDeclaredMethod(method.getName(), method.getParameterTypes()));
		}
	}

	/** Root keys by id, each of 32 bytes that differ per id. */
	private static Map<String, byte[]> keys(String... ids) {
		Map<String, byte[]> keys = new LinkedHashMap<>();
		for (String id : ids) {
			byte[] key = new byte[32];
			Arrays.fill(key, (byte) id.hashCode());
			keys.put(id, key);
		}
		return keys;
	}

}
