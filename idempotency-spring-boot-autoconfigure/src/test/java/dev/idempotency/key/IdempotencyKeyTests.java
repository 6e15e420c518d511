package dev.idempotency.key;

import java.time.Instant;
import java.util.UUID;

import dev.idempotency.testing.TestKeys;
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
	void opaqueKeysAreShortVisibleAscii() {
		assertThat(IdempotencyKey.opaque("order-42").value()).isEqualTo("order-42");
		assertThatExceptionOfType(InvalidIdempotencyKeyException.class).isThrownBy(() -> IdempotencyKey.opaque(""));
		assertThatExceptionOfType(InvalidIdempotencyKeyException.class)
			.isThrownBy(() -> IdempotencyKey.opaque("x".repeat(65)));
		assertThatExceptionOfType(InvalidIdempotencyKeyException.class)
			.isThrownBy(() -> IdempotencyKey.opaque("with space"));
	}

}
