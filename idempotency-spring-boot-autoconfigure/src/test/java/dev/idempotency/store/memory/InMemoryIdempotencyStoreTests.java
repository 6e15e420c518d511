package dev.idempotency.store.memory;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.UUID;

import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.IdempotencyStoreContractTests;
import dev.idempotency.store.IdempotencyStoreException;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.ReserveRequest;
import dev.idempotency.store.ReserveResult;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class InMemoryIdempotencyStoreTests extends IdempotencyStoreContractTests {

	private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));

	@Override
	protected IdempotencyStore createStore() {
		return new InMemoryIdempotencyStore(this.clock, 10_000);
	}

	@Override
	protected void elapse(Duration duration) {
		this.clock.advance(duration.plusMillis(1));
	}

	@Test
	void aFullStoreDropsExpiredRecordsBeforeRefusing() {
		InMemoryIdempotencyStore small = new InMemoryIdempotencyStore(this.clock, 3);
		for (int i = 0; i < 3; i++) {
			assertThat(small.reserve(reserve(Duration.ofSeconds(10)))).isInstanceOf(ReserveResult.Acquired.class);
		}
		assertThatExceptionOfType(IdempotencyStoreException.class)
			.isThrownBy(() -> small.reserve(reserve(Duration.ofSeconds(10))))
			.withMessageContaining("max-entries");
		assertThat(small.size()).isEqualTo(3);
		this.clock.advance(Duration.ofSeconds(11));
		assertThat(small.reserve(reserve(Duration.ofSeconds(10)))).isInstanceOf(ReserveResult.Acquired.class);
		assertThat(small.size()).isEqualTo(1);
	}

	@Test
	void aFloodOfDistinctKeysStaysWithinTheBound() {
		InMemoryIdempotencyStore bounded = new InMemoryIdempotencyStore(this.clock, 1_000);
		int refused = 0;
		for (int i = 0; i < 50_000; i++) {
			try {
				bounded.reserve(reserve(Duration.ofSeconds(5)));
			}
			catch (IdempotencyStoreException ex) {
				refused++;
			}
			if (i % 200 == 0) {
				this.clock.advance(Duration.ofMillis(500));
			}
			assertThat(bounded.size()).isLessThanOrEqualTo(1_000);
		}
		assertThat(refused).as("a steady flood that outruns expiry is refused, not stored").isPositive();
	}

	private ReserveRequest reserve(Duration retention) {
		return new ReserveRequest(new RecordId("s", UUID.randomUUID().toString()), "fp", "op",
				UUID.randomUUID().toString(), Duration.ofSeconds(1), retention);
	}

	static final class MutableClock extends Clock {

		private volatile Instant now;

		MutableClock(Instant start) {
			this.now = start;
		}

		synchronized void advance(Duration duration) {
			this.now = this.now.plus(duration);
		}

		@Override
		public Instant instant() {
			return this.now;
		}

		@Override
		public java.time.ZoneId getZone() {
			return ZoneOffset.UTC;
		}

		@Override
		public Clock withZone(java.time.ZoneId zone) {
			return this;
		}

	}

}
