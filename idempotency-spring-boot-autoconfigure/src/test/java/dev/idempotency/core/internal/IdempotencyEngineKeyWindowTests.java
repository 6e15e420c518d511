package dev.idempotency.core.internal;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;

import dev.idempotency.core.IdempotencyErrorType;
import dev.idempotency.core.IdempotencyListener;
import dev.idempotency.core.IdempotencySettings;
import dev.idempotency.core.KeyFormat;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.StoredResponse;
import dev.idempotency.store.memory.InMemoryIdempotencyStore;
import dev.idempotency.test.TestKeys;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A key is accepted from its UUIDv7 time minus the clock skew until its time plus
 * lifetime and grace; its record must live at least as long, or a retry inside the window
 * runs again.
 */
class IdempotencyEngineKeyWindowTests {

	private static final Instant START = Instant.parse("2026-03-01T12:00:00Z");

	private final SettableClock clock = new SettableClock(START);

	private final InMemoryIdempotencyStore store = InMemoryIdempotencyStore.builder()
		.clock(this.clock)
		.maxEntries(1_000)
		.maxSharePerScope(1.0)
		.onFull(InMemoryIdempotencyStore.OnFull.REFUSE)
		.build();

	private final IdempotencyEngine engine = new IdempotencyEngine(this.store,
			IdempotencySettings.builder()
				.lifetime(Duration.ofSeconds(20))
				.grace(Duration.ZERO)
				.lease(Duration.ofSeconds(5))
				.heartbeatInterval(Duration.ofSeconds(2))
				.clockSkew(Duration.ofMinutes(1))
				.inFlightWait(Duration.ZERO)
				.build(),
			this.clock, IdempotencyListener.NONE);

	@AfterEach
	void close() {
		this.engine.close();
	}

	@Test
	void aKeyStampedInTheFutureWithinTheSkewIsReplayedForAsLongAsItIsAccepted() {
		// 11.5: lifetime 20s, grace 0, key stamped now + 50s: its retry 24 s later ran
		// again.
		String key = TestKeys.at(START.plusSeconds(50));
		Reservation owner = ((Decision.Proceed) this.engine.begin(call(key))).reservation();
		this.engine.succeeded(owner, new StoredResponse(201, Map.of(), new byte[] { 7 }));

		this.clock.set(START.plusSeconds(24));
		assertThat(this.engine.begin(call(key))).isInstanceOf(Decision.Replay.class);
		this.clock.set(START.plusMillis(69_900));
		assertThat(this.engine.begin(call(key))).as("last moment the key is accepted")
			.isInstanceOf(Decision.Replay.class);
		this.clock.set(START.plusSeconds(71));
		Decision late = this.engine.begin(call(key));
		assertThat(late).isInstanceOf(Decision.Reject.class);
		assertThat(((Decision.Reject) late).error().type()).isEqualTo(IdempotencyErrorType.INVALID_KEY);
	}

	@Test
	void aKeyStampedNowIsKeptForLifetimePlusGraceFromItsTime() {
		String key = TestKeys.at(START);
		Reservation owner = ((Decision.Proceed) this.engine.begin(call(key))).reservation();
		this.engine.succeeded(owner, new StoredResponse(201, Map.of(), new byte[] { 7 }));
		assertThat(this.store.find(new RecordId("scope", key)).orElseThrow().expiresAt())
			.isEqualTo(START.plusSeconds(20));
	}

	@Test
	void aKeyStampedInThePastIsKeptAsLongAsARecordStartedNowWould() {
		// Retention never shrinks below lifetime + grace from the reservation.
		String key = TestKeys.at(START.minusSeconds(10));
		Reservation owner = ((Decision.Proceed) this.engine.begin(call(key))).reservation();
		this.engine.succeeded(owner, new StoredResponse(201, Map.of(), new byte[] { 7 }));
		assertThat(this.store.find(new RecordId("scope", key)).orElseThrow().expiresAt())
			.isEqualTo(START.plusSeconds(20));
	}

	private static IdempotentCall call(String key) {
		return new IdempotentCall("scope", List.of(key), KeyFormat.UUID_V7, false, "op", () -> "fp");
	}

	static final class SettableClock extends Clock {

		private volatile Instant now;

		SettableClock(Instant start) {
			this.now = start;
		}

		void set(Instant instant) {
			this.now = instant;
		}

		@Override
		public Instant instant() {
			return this.now;
		}

		@Override
		public ZoneId getZone() {
			return ZoneOffset.UTC;
		}

		@Override
		public Clock withZone(ZoneId zone) {
			return this;
		}

	}

}
