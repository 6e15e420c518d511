package dev.idempotency.core.internal;

import java.time.Instant;
import java.util.UUID;

import dev.idempotency.test.TestKeys;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class IdempotencyKeyTests {

	@Test
	void aUuidV7IsAcceptedWithItsTimestamp() {
		Instant at = Instant.parse("2026-03-04T05:06:07.089Z");
		String key = TestKeys.at(at);
		IdempotencyKey parsed = IdempotencyKey.parseUuidV7(key);
		assertThat(parsed.value()).isEqualTo(key);
		assertThat(parsed.timestamp()).isEqualTo(at);
	}

	@Test
	void upperCaseAndTheQuotedFormAreCanonicalised() {
		String key = TestKeys.newKey();
		assertThat(IdempotencyKey.parseUuidV7(key.toUpperCase()).value()).isEqualTo(key);
		assertThat(IdempotencyKey.parseUuidV7("\"" + key + "\"").value()).isEqualTo(key);
	}

	@Test
	void theRfcExampleIsAccepted() {
		// RFC 9562 appendix A.6
		IdempotencyKey key = IdempotencyKey.parseUuidV7("017F22E2-79B0-7CC3-98C4-DC0C0C07398F");
		assertThat(key.timestamp()).isEqualTo(Instant.parse("2022-02-22T19:22:22Z"));
	}

	@Test
	void otherVersionsAreRejectedWithTheVersionNamed() {
		assertThatExceptionOfType(InvalidIdempotencyKeyException.class)
			.isThrownBy(() -> IdempotencyKey.parseUuidV7(UUID.randomUUID().toString()))
			.withMessageContaining("version 4");
	}

	@ParameterizedTest
	@ValueSource(strings = { "", "not-a-key", "017f22e2-79b0-7cc3-c8c4-dc0c0c07398f", // variant
																						// 110
			"017f22e2-79b0-7cc3-78c4-dc0c0c07398f", // variant 0
			"017f22e2-79b0-7cc3-98c4-dc0c0c07398", "017f22e2-79b0-7cc3-98c4-dc0c0c07398fa",
			"017f22e279b0-7cc3-98c4-dc0c0c07398f0", "017f22e2-79b0-7cc3-98c4-dc0c0c07398g",
			"{017f22e2-79b0-7cc3-98c4-dc0c0c07398f}", "\"017f22e2-79b0-7cc3-98c4-dc0c0c07398f",
			"017f22e2-79b0-7cc3-98c4-dc0c0c07398Ｆ",
			"017f22e2-79b0-7cc3-98c4-dc0c0c07398f,017f22e2-79b0-7cc3-98c4-dc0c0c07398f" })
	void malformedKeysAreRejected(String raw) {
		assertThatExceptionOfType(InvalidIdempotencyKeyException.class)
			.isThrownBy(() -> IdempotencyKey.parseUuidV7(raw))
			.withMessageContaining("key");
	}

	@Test
	void opaqueKeysAreUpTo255VisibleAsciiCharactersTakenAsSent() {
		assertThat(IdempotencyKey.opaque("order-42").value()).isEqualTo("order-42");
		assertThat(IdempotencyKey.opaque("Order-42").value()).isEqualTo("Order-42");
		assertThat(IdempotencyKey.opaque("\"quoted\"").value()).isEqualTo("\"quoted\"");
		assertThat(IdempotencyKey.opaque("x".repeat(255)).timestamp()).isNull();
		assertThatExceptionOfType(InvalidIdempotencyKeyException.class).isThrownBy(() -> IdempotencyKey.opaque(""));
		assertThatExceptionOfType(InvalidIdempotencyKeyException.class)
			.isThrownBy(() -> IdempotencyKey.opaque("x".repeat(256)))
			.withMessageContaining("longer than 255");
		assertThatExceptionOfType(InvalidIdempotencyKeyException.class)
			.isThrownBy(() -> IdempotencyKey.opaque("with space"));
		assertThatExceptionOfType(InvalidIdempotencyKeyException.class)
			.isThrownBy(() -> IdempotencyKey.opaque("caf\u00e9"))
			.withMessageContaining("character 4");
	}

	@Test
	void anyRfc9562UuidIsAcceptedAndOnlyAUuidV7CarriesATime() {
		IdempotencyKey v4 = IdempotencyKey.parseUuid("\"F47AC10B-58CC-4372-A567-0E02B2C3D479\"");
		assertThat(v4.value()).isEqualTo("f47ac10b-58cc-4372-a567-0e02b2c3d479");
		assertThat(v4.timestamp()).isNull();
		assertThat(IdempotencyKey.parseUuid("6ba7b810-9dad-11d1-80b4-00c04fd430c8").timestamp()).isNull();
		assertThat(IdempotencyKey.parseUuid("018f3e1c-5b2a-7c3d-9e4f-0a1b2c3d4e5f").timestamp())
			.isEqualTo(IdempotencyKey.parseUuidV7("018f3e1c-5b2a-7c3d-9e4f-0a1b2c3d4e5f").timestamp());
		for (String invalid : new String[] { "00000000-0000-0000-0000-000000000000",
				"ffffffff-ffff-ffff-ffff-ffffffffffff", "f47ac10b-58cc-9372-a567-0e02b2c3d479",
				"f47ac10b-58cc-4372-c567-0e02b2c3d479", "order-42" }) {
			assertThatExceptionOfType(InvalidIdempotencyKeyException.class).as(invalid)
				.isThrownBy(() -> IdempotencyKey.parseUuid(invalid));
		}
	}

}
