package dev.idempotency.core.internal;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;

import dev.idempotency.core.IdempotencyError;
import dev.idempotency.core.IdempotencyErrorType;
import dev.idempotency.core.IdempotencyListener;
import dev.idempotency.core.IdempotencySettings;
import dev.idempotency.core.KeyFormat;
import dev.idempotency.store.StoredResponse;
import dev.idempotency.store.memory.InMemoryIdempotencyStore;
import dev.idempotency.test.TestKeys;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a caller gets when the in-memory store is full: a refusal, never an evicted live
 * record.
 */
class IdempotencyEngineFullStoreTests {

	@Test
	void aNewKeyIsRefusedWith503AndRetryAfterWhenTheStoreIsFull() {
		try (IdempotencyEngine engine = new IdempotencyEngine(InMemoryIdempotencyStore.builder()
			.clock(Clock.systemUTC())
			.maxEntries(1)
			.maxSharePerScope(1.0)
			.onFull(InMemoryIdempotencyStore.OnFull.REFUSE)
			.build(), IdempotencySettings.defaults(), Clock.systemUTC(), IdempotencyListener.NONE)) {
			String live = TestKeys.newKey();
			assertThat(engine.begin(call(live))).isInstanceOf(Decision.Proceed.class);
			Decision refused = engine.begin(call(TestKeys.newKey()));
			assertThat(refused).isInstanceOf(Decision.Reject.class);
			IdempotencyError error = ((Decision.Reject) refused).error();
			assertThat(error.type()).isEqualTo(IdempotencyErrorType.STORE_UNAVAILABLE);
			assertThat(error.status()).isEqualTo(503);
			assertThat(error.retryAfter()).as("until the oldest record expires, not store.retry-after")
				.isBetween(IdempotencySettings.defaults().retention().minusMinutes(1),
						IdempotencySettings.defaults().retention());
			assertThat(error.retryAfter().getNano()).as("whole seconds, rounded up").isZero();
			Decision duplicate = engine.begin(call(live));
			assertThat(((Decision.Reject) duplicate).error().type()).as("the live record was kept")
				.isEqualTo(IdempotencyErrorType.REQUEST_IN_FLIGHT);
		}
	}

	@Test
	void aResponseThatDoesNotFitIsNotStoredAndARetryRunsAgainAtOnce() {
		try (IdempotencyEngine engine = new IdempotencyEngine(InMemoryIdempotencyStore.builder()
			.clock(Clock.systemUTC())
			.maxEntries(100)
			.maxBytes(10_000)
			.maxSharePerScope(1.0)
			.onFull(InMemoryIdempotencyStore.OnFull.REFUSE)
			.build(), IdempotencySettings.defaults(), Clock.systemUTC(), IdempotencyListener.NONE)) {
			String key = TestKeys.newKey();
			Reservation owner = ((Decision.Proceed) engine.begin(call(key))).reservation();
			byte[] body = new byte[20_000];
			new Random(1).nextBytes(body);
			engine.succeeded(owner, new StoredResponse(200, Map.of(), body));
			Decision retry = engine.begin(call(key));
			assertThat(retry).as("released, not left in flight until the lease ends")
				.isInstanceOf(Decision.Proceed.class);
			assertThat(((Decision.Proceed) retry).reservation().takenOver()).isFalse();
		}
	}

	private static IdempotentCall call(String key) {
		return new IdempotentCall("scope", List.of(key), KeyFormat.UUID_V7, false, "op", () -> "fp");
	}

}
