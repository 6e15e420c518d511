package dev.idempotency.store.seal;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import javax.crypto.Cipher;
import javax.crypto.SecretKey;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyRejectedException;
import dev.idempotency.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempotency.core.IdempotencyErrorType;
import dev.idempotency.core.IdempotencyTemplate;
import dev.idempotency.core.IdempotentRequest;
import dev.idempotency.core.ResultCodec;
import dev.idempotency.method.IdempotencyMethodAutoConfiguration;
import dev.idempotency.core.internal.IdempotencyEngine;
import dev.idempotency.core.internal.IdempotentCall;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.StoredResponse;
import dev.idempotency.store.StoredResponseCodec;
import dev.idempotency.store.memory.InMemoryIdempotencyStore;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Sealing as an application configures it, each context a node over one store: keys from
 * the properties, rotated node by node, on the method door; and a bean of
 * {@link SealingKeys} in their place, here an envelope scheme over a stand-in KMS, on the
 * template.
 */
class SealingAutoConfigurationTests {

	private static final String KEY_1 = SealedAnswersOverHttpTests.KEY_1;

	private static final String KEY_2 = "ZWZnaGlqa2xtbm9wcXJzdHV2d3h5ent8fX5/gIGCg4Q=";

	private final InMemoryIdempotencyStore store = InMemoryIdempotencyStore.builder()
		.clock(Clock.systemUTC())
		.maxEntries(1000)
		.maxSharePerScope(1.0)
		.build();

	private final ApplicationContextRunner node = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, IdempotencyAutoConfiguration.class,
				IdempotencyMethodAutoConfiguration.class))
		.withBean(IdempotencyStore.class, () -> this.store)
		.withBean(Orders.class);

	@Test
	void withoutKeysNothingIsSealed() {
		this.node.run((context) -> {
			assertThat(context.getBean(Sealing.class).seals()).isFalse();
			context.getBean(Orders.class).place("order-0");
			assertThat(StoredResponseCodec.isSealed(stored("order-0"))).isFalse();
		});
	}

	/**
	 * The rotation of production.md, node by node: a key added, made the sealing key,
	 * then the first removed (here before its records expired, to see what that does).
	 */
	@Test
	void keysFromThePropertiesSealTheMethodDoorsResultsAndRotate() {
		this.node
			.withPropertyValues("idempotency.encryption.keys.k1=" + KEY_1, "idempotency.encryption.sealing-key-id=k1")
			.run((context) -> {
				Orders orders = context.getBean(Orders.class);
				assertThat(orders.place("order-1")).isEqualTo("receipt of order-1 for alice #1");
				assertThat(orders.place("order-1")).isEqualTo("receipt of order-1 for alice #1");
				assertThat(orders.runs()).isEqualTo(1);
			});
		StoredResponse stored = stored("order-1");
		assertThat(StoredResponseCodec.isSealed(stored)).isTrue();
		assertThat(new String(stored.body(), StandardCharsets.ISO_8859_1)).doesNotContain("alice")
			.doesNotContain("receipt");

		this.node
			.withPropertyValues("idempotency.encryption.keys.k1=" + KEY_1, "idempotency.encryption.keys.k2=" + KEY_2,
					"idempotency.encryption.sealing-key-id=k2")
			.run((context) -> {
				Orders orders = context.getBean(Orders.class);
				assertThat(orders.place("order-1")).as("sealed under k1, replayed")
					.isEqualTo("receipt of order-1 for alice #1");
				assertThat(orders.place("order-2")).isEqualTo("receipt of order-2 for alice #1");
				assertThat(orders.runs()).isEqualTo(1);
			});

		this.node
			.withPropertyValues("idempotency.encryption.keys.k2=" + KEY_2, "idempotency.encryption.sealing-key-id=k2")
			.run((context) -> {
				Orders orders = context.getBean(Orders.class);
				assertThat(orders.place("order-2")).as("sealed under k2").isEqualTo("receipt of order-2 for alice #1");
				assertThatExceptionOfType(IdempotencyRejectedException.class).isThrownBy(() -> orders.place("order-1"))
					.satisfies((ex) -> {
						assertThat(ex.error().type()).isEqualTo(IdempotencyErrorType.INTEGRITY_CHECK_FAILED);
						assertThat(ex.getStatusCode().value()).isEqualTo(500);
					});
				assertThat(orders.runs()).as("refused, not run again").isZero();
			});
	}

	@Test
	void aSealingKeysBeanReplacesThePropertiesSoThatAKmsEnvelopePlugsIn() {
		StandInKms kms = new StandInKms();
		KmsEnvelopeKeys firstNodeKeys = new KmsEnvelopeKeys(kms);
		IdempotentRequest request = IdempotentRequest.of("charge-1", "charge", "card 4111".getBytes());
		this.node.withBean(SealingKeys.class, () -> firstNodeKeys).run((context) -> {
			String charged = context.getBean(IdempotencyTemplate.class)
				.execute(request, ResultCodec.utf8(), () -> "charged alice");
			assertThat(charged).isEqualTo("charged alice");
		});
		StoredResponse stored = this.store.find(IdempotencyEngine.recordId("", "charge-1", IdempotentCall.Door.METHOD))
			.orElseThrow()
			.completedResponse();
		assertThat(StoredResponseCodec.isSealed(stored)).isTrue();
		assertThat(keyId(stored)).as("the id is the data key as the KMS wrapped it")
			.isEqualTo(firstNodeKeys.sealingKey().id());
		assertThat(new String(stored.body(), StandardCharsets.ISO_8859_1)).doesNotContain("alice");

		KmsEnvelopeKeys secondNodeKeys = new KmsEnvelopeKeys(kms);
		this.node.withBean(SealingKeys.class, () -> secondNodeKeys).run((context) -> {
			IdempotencyTemplate template = context.getBean(IdempotencyTemplate.class);
			for (int retry = 0; retry < 3; retry++) {
				assertThat(template.execute(request, ResultCodec.utf8(), () -> "charged again"))
					.isEqualTo("charged alice");
			}
			assertThat(kms.unwrapped).as("the first node's data key, unwrapped once").hasValue(1);
		});
	}

	private StoredResponse stored(String key) {
		return this.store.find(IdempotencyEngine.recordId("anonymous", key, IdempotentCall.Door.METHOD))
			.orElseThrow()
			.completedResponse();
	}

	private static String keyId(StoredResponse sealed) {
		ByteBuffer envelope = ByteBuffer.wrap(sealed.body());
		byte[] id = new byte[Short.toUnsignedInt(envelope.getShort())];
		envelope.get(id);
		return new String(id, StandardCharsets.UTF_8);
	}

	public static class Orders {

		private final AtomicInteger runs = new AtomicInteger();

		public int runs() {
			return this.runs.get();
		}

		@Idempotent(key = "#orderId")
		public String place(String orderId) {
			return "receipt of " + orderId + " for alice #" + this.runs.incrementAndGet();
		}

	}

	/**
	 * What the test has in place of a KMS: data keys made on request, returned with their
	 * copy wrapped under a master key that never leaves it; a wrapped copy unwrapped on
	 * request; and an HMAC key for fingerprints that it keeps, the same for every node.
	 */
	static final class StandInKms {

		private final SecretKey master = new SecretKeySpec(random(32), "AES");

		private final SecretKey fingerprintKey = new SecretKeySpec(random(32), "HmacSHA256");

		final AtomicInteger unwrapped = new AtomicInteger();

		/** A new data key: its bytes, and its copy wrapped under the master key. */
		byte[][] generateDataKey() {
			byte[] dataKey = random(32);
			byte[] nonce = random(12);
			byte[] wrapped = crypt(Cipher.ENCRYPT_MODE, nonce, dataKey);
			return new byte[][] { dataKey, ByteBuffer.allocate(12 + wrapped.length).put(nonce).put(wrapped).array() };
		}

		byte[] decrypt(byte[] wrapped) {
			this.unwrapped.incrementAndGet();
			ByteBuffer in = ByteBuffer.wrap(wrapped);
			byte[] nonce = new byte[12];
			in.get(nonce);
			byte[] sealed = new byte[in.remaining()];
			in.get(sealed);
			return crypt(Cipher.DECRYPT_MODE, nonce, sealed);
		}

		SecretKey fingerprintKey() {
			return this.fingerprintKey;
		}

		private byte[] crypt(int mode, byte[] nonce, byte[] input) {
			try {
				Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
				cipher.init(mode, this.master, new GCMParameterSpec(128, nonce));
				return cipher.doFinal(input);
			}
			catch (GeneralSecurityException ex) {
				throw new IllegalStateException(ex);
			}
		}

		private static byte[] random(int length) {
			byte[] bytes = new byte[length];
			new SecureRandom().nextBytes(bytes);
			return bytes;
		}

	}

	/**
	 * The envelope scheme of production.md: a node seals with a data key of its own, and
	 * the key's id is its wrapped copy, which any node has the KMS unwrap (once).
	 */
	static final class KmsEnvelopeKeys implements SealingKeys {

		private final StandInKms kms;

		private final SealingKey sealingKey;

		private final Map<String, SecretKey> opened = new ConcurrentHashMap<>();

		KmsEnvelopeKeys(StandInKms kms) {
			this.kms = kms;
			byte[][] dataKey = kms.generateDataKey();
			String id = Base64.getUrlEncoder().withoutPadding().encodeToString(dataKey[1]);
			this.sealingKey = new SealingKey(id, new SecretKeySpec(dataKey[0], "AES"));
			this.opened.put(id, this.sealingKey.key());
		}

		@Override
		public SealingKey sealingKey() {
			return this.sealingKey;
		}

		@Override
		public @Nullable SecretKey openingKey(String id) {
			return this.opened.computeIfAbsent(id,
					(wrapped) -> new SecretKeySpec(this.kms.decrypt(Base64.getUrlDecoder().decode(wrapped)), "AES"));
		}

		@Override
		public List<SecretKey> fingerprintKeys() {
			return List.of(this.kms.fingerprintKey());
		}

	}

}
