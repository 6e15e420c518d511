package dev.idempotency.store.memory;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.IdempotencyStoreContractTests;
import dev.idempotency.store.IdempotencyStoreException;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.ReserveRequest;
import dev.idempotency.store.ReserveResult;
import dev.idempotency.store.StoredResponse;
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

	@Test
	void aStoreBoundedByBytesRefusesNewKeysOnceStoredResponsesFillItInsteadOfGrowingTheHeap() {
		// 11.3: a count bound alone let 1,000 responses of ~920 KB fill a 1 GB heap.
		InMemoryIdempotencyStore store = new InMemoryIdempotencyStore(this.clock, 1_000, 300_000);
		int stored = 0;
		IdempotencyStoreException refusal = null;
		for (int i = 0; i < 1_000 && refusal == null; i++) {
			ReserveRequest request = reserve(Duration.ofSeconds(10));
			try {
				store.reserve(request);
				if (store.complete(request.id(), request.ownerToken(), response(92_000))) {
					stored++;
				}
			}
			catch (IdempotencyStoreException ex) {
				refusal = ex;
			}
			assertThat(store.retainedBytes()).isLessThanOrEqualTo(300_000);
		}
		assertThat(stored).isBetween(2, 3);
		assertThat(refusal).isNotNull();
		assertThat(refusal.getMessage()).contains("idempotency.store.memory.max-bytes").contains("300000");
		assertThat(store.retainedBytes()).isEqualTo(store.recountBytes());
	}

	@Test
	void aResponseThatDoesNotFitIsNotStoredAndItsKeyIsFreedForARetry() {
		InMemoryIdempotencyStore store = new InMemoryIdempotencyStore(this.clock, 1_000, 100_000);
		ReserveRequest request = reserve(Duration.ofSeconds(10));
		store.reserve(request);
		assertThatExceptionOfType(IdempotencyStoreException.class)
			.isThrownBy(() -> store.complete(request.id(), request.ownerToken(), response(150_000)))
			.withMessageContaining("max-bytes");
		assertThat(store.find(request.id())).isEmpty();
		assertThat(store.retainedBytes()).isZero();
		assertThat(store.reserve(request)).isEqualTo(new ReserveResult.Acquired(false));
	}

	@Test
	void aStoreFullOfBytesDropsExpiredRecordsBeforeRefusing() {
		InMemoryIdempotencyStore store = new InMemoryIdempotencyStore(this.clock, 1_000, 100_000);
		ReserveRequest first = reserve(Duration.ofSeconds(10));
		store.reserve(first);
		assertThat(store.complete(first.id(), first.ownerToken(), response(80_000))).isTrue();
		ReserveRequest second = reserve(Duration.ofSeconds(10));
		store.reserve(second);
		assertThatExceptionOfType(IdempotencyStoreException.class)
			.isThrownBy(() -> store.complete(second.id(), second.ownerToken(), response(80_000)));
		this.clock.advance(Duration.ofSeconds(11));
		ReserveRequest third = reserve(Duration.ofSeconds(10));
		store.reserve(third);
		assertThat(store.complete(third.id(), third.ownerToken(), response(80_000))).isTrue();
		assertThat(store.size()).isEqualTo(1);
		assertThat(store.retainedBytes()).isEqualTo(store.recountBytes()).isGreaterThan(80_000);
	}

	@Test
	void theByteCountStaysExactWhenManyThreadsReserveCompleteReleaseAndPurge() throws Exception {
		InMemoryIdempotencyStore store = new InMemoryIdempotencyStore(this.clock, 5_000, 2_000_000);
		int threads = 8;
		CyclicBarrier start = new CyclicBarrier(threads);
		ExecutorService pool = Executors.newFixedThreadPool(threads);
		try {
			List<Future<?>> workers = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				int seed = t;
				workers.add(pool.submit(() -> {
					Random random = new Random(seed);
					List<ReserveRequest> mine = new ArrayList<>();
					start.await();
					for (int i = 0; i < 3_000; i++) {
						try {
							int action = random.nextInt(10);
							if (action < 4 || mine.isEmpty()) {
								ReserveRequest request = reserve(Duration.ofMillis(1_000 + random.nextInt(2_000)));
								store.reserve(request);
								mine.add(request);
							}
							else if (action < 7) {
								ReserveRequest request = mine.remove(random.nextInt(mine.size()));
								store.complete(request.id(), request.ownerToken(), response(random.nextInt(4_000)));
							}
							else if (action < 8) {
								ReserveRequest request = mine.remove(random.nextInt(mine.size()));
								store.release(request.id(), request.ownerToken());
							}
							else if (action < 9) {
								store.purgeExpired(50);
							}
							else {
								this.clock.advance(Duration.ofMillis(10));
							}
						}
						catch (IdempotencyStoreException ex) {
							// full: refused, as it should be
						}
						assertThat(store.retainedBytes()).isLessThanOrEqualTo(2_000_000);
					}
					return null;
				}));
			}
			for (Future<?> worker : workers) {
				worker.get(60, TimeUnit.SECONDS);
			}
		}
		finally {
			pool.shutdownNow();
		}
		assertThat(store.retainedBytes()).isPositive().isEqualTo(store.recountBytes());
		assertThat(store.size()).isEqualTo(store.recountEntries());
		this.clock.advance(Duration.ofMinutes(1));
		store.purgeExpired(Integer.MAX_VALUE);
		assertThat(store.size()).isZero();
		assertThat(store.retainedBytes()).isZero();
	}

	@Test
	void theDefaultByteBoundIsOneSixteenthOfTheMaximumHeap() {
		assertThat(InMemoryIdempotencyStore.defaultMaxBytes()).isEqualTo(Runtime.getRuntime().maxMemory() / 16);
	}

	private static StoredResponse response(int bodyBytes) {
		// Random bytes: the codec may compress, and these must not shrink.
		byte[] body = new byte[bodyBytes];
		new Random(bodyBytes).nextBytes(body);
		return new StoredResponse(200, Map.of("Content-Type", List.of("application/json")), body);
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
