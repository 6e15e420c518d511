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
import java.util.concurrent.atomic.AtomicInteger;

import dev.idempotency.store.CompletedRecordRequest;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.IdempotencyStoreException;
import dev.idempotency.store.IdempotencyStoreFullException;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.ReserveRequest;
import dev.idempotency.store.ReserveResult;
import dev.idempotency.store.StoredResponse;
import dev.idempotency.store.contract.IdempotencyStoreContractTests;
import dev.idempotency.store.memory.InMemoryIdempotencyStore.Usage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class InMemoryIdempotencyStoreTests extends IdempotencyStoreContractTests {

	private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));

	@Override
	protected IdempotencyStore createStore() {
		return InMemoryIdempotencyStore.builder()
			.clock(this.clock)
			.maxEntries(10_000)
			.maxSharePerScope(1.0)
			.onFull(InMemoryIdempotencyStore.OnFull.REFUSE)
			.build();
	}

	/** A full store that refuses: it has no server to lose. */
	@Override
	protected IdempotencyStore createUnreachableStore() {
		InMemoryIdempotencyStore full = InMemoryIdempotencyStore.builder()
			.clock(this.clock)
			.maxEntries(1)
			.maxSharePerScope(1.0)
			.onFull(InMemoryIdempotencyStore.OnFull.REFUSE)
			.build();
		full.reserve(reserve(Duration.ofMinutes(5)));
		return full;
	}

	@Override
	protected void elapse(Duration duration) {
		this.clock.advance(duration.plusMillis(1));
	}

	@Test
	void aFullStoreDropsExpiredRecordsBeforeRefusing() {
		InMemoryIdempotencyStore small = InMemoryIdempotencyStore.builder()
			.clock(this.clock)
			.maxEntries(3)
			.maxSharePerScope(1.0)
			.onFull(InMemoryIdempotencyStore.OnFull.REFUSE)
			.build();
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
		InMemoryIdempotencyStore bounded = InMemoryIdempotencyStore.builder()
			.clock(this.clock)
			.maxEntries(1_000)
			.maxSharePerScope(1.0)
			.onFull(InMemoryIdempotencyStore.OnFull.REFUSE)
			.build();
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
		InMemoryIdempotencyStore store = InMemoryIdempotencyStore.builder()
			.clock(this.clock)
			.maxEntries(1_000)
			.maxBytes(300_000)
			.maxSharePerScope(1.0)
			.onFull(InMemoryIdempotencyStore.OnFull.REFUSE)
			.build();
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
		assertCountsReturnToZero(store, this.clock);
	}

	@Test
	void aResponseThatDoesNotFitIsNotStoredAndItsKeyIsFreedForARetry() {
		InMemoryIdempotencyStore store = InMemoryIdempotencyStore.builder()
			.clock(this.clock)
			.maxEntries(1_000)
			.maxBytes(100_000)
			.maxSharePerScope(1.0)
			.onFull(InMemoryIdempotencyStore.OnFull.REFUSE)
			.build();
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
		InMemoryIdempotencyStore store = InMemoryIdempotencyStore.builder()
			.clock(this.clock)
			.maxEntries(1_000)
			.maxBytes(100_000)
			.maxSharePerScope(1.0)
			.onFull(InMemoryIdempotencyStore.OnFull.REFUSE)
			.build();
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
		assertThat(store.retainedBytes()).isGreaterThan(80_000);
		assertCountsReturnToZero(store, this.clock);
	}

	@Test
	void theByteCountStaysExactWhenManyThreadsReserveCompleteReleaseAndPurge() throws Exception {
		InMemoryIdempotencyStore store = InMemoryIdempotencyStore.builder()
			.clock(this.clock)
			.maxEntries(5_000)
			.maxBytes(2_000_000)
			.maxSharePerScope(1.0)
			.onFull(InMemoryIdempotencyStore.OnFull.REFUSE)
			.build();
		race(8, 3_000, Duration.ofSeconds(60), (random, mine) -> {
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
		});
		assertThat(store.retainedBytes()).isPositive();
		assertCountsReturnToZero(store, this.clock);
	}

	@ParameterizedTest
	@ValueSource(ints = { 1_000, 20_000 })
	void aFullStoreRefusesWithoutVisitingItsRecords(int records) {
		// 20.4: every refused request walked every record looking for expired ones.
		InMemoryIdempotencyStore store = InMemoryIdempotencyStore.builder()
			.clock(this.clock)
			.maxEntries(records)
			.maxSharePerScope(1.0)
			.onFull(InMemoryIdempotencyStore.OnFull.REFUSE)
			.build();
		for (int i = 0; i < records; i++) {
			store.reserve(reserve(Duration.ofSeconds(10)));
		}
		long before = store.purgeVisits();
		for (int i = 0; i < 100; i++) {
			assertThatExceptionOfType(IdempotencyStoreException.class)
				.isThrownBy(() -> store.reserve(reserve(Duration.ofSeconds(10))));
		}
		assertThat(store.purgeVisits() - before).as("records visited by 100 refusals").isZero();
		assertThat(store.size()).isEqualTo(records);
	}

	@Test
	void droppingExpiredRecordsVisitsOnlyThoseThatExpired() {
		InMemoryIdempotencyStore store = InMemoryIdempotencyStore.builder()
			.clock(this.clock)
			.maxEntries(10_000)
			.maxSharePerScope(1.0)
			.onFull(InMemoryIdempotencyStore.OnFull.REFUSE)
			.build();
		for (int i = 0; i < 9_700; i++) {
			store.reserve(reserve(Duration.ofMinutes(10)));
		}
		for (int i = 0; i < 300; i++) {
			store.reserve(reserve(Duration.ofSeconds(5)));
		}
		this.clock.advance(Duration.ofSeconds(6));
		long before = store.purgeVisits();
		assertThat(store.reserve(reserve(Duration.ofSeconds(5)))).isInstanceOf(ReserveResult.Acquired.class);
		assertThat(store.purgeVisits() - before).isEqualTo(300);
		assertThat(store.size()).isEqualTo(9_701);
		assertThat(store.purgeExpired(Integer.MAX_VALUE)).isZero();
	}

	@Test
	void heartbeatsExtendTheLeaseButNotTheRecordsPlaceInTheExpiryOrder() {
		InMemoryIdempotencyStore store = InMemoryIdempotencyStore.builder()
			.clock(this.clock)
			.maxEntries(100)
			.maxSharePerScope(1.0)
			.onFull(InMemoryIdempotencyStore.OnFull.REFUSE)
			.build();
		ReserveRequest request = reserve(Duration.ofSeconds(10));
		store.reserve(request);
		for (int i = 0; i < 4; i++) {
			this.clock.advance(Duration.ofSeconds(2));
			assertThat(store.heartbeat(request.id(), request.ownerToken(), Duration.ofSeconds(3))).isTrue();
			assertThat(store.purgeExpired(Integer.MAX_VALUE)).isZero();
			assertThat(store.reserve(new ReserveRequest(request.id(), request.fingerprint(), request.operation(),
					UUID.randomUUID().toString(), request.lease(), request.retention())))
				.as("no takeover while the beaten lease lives")
				.isInstanceOf(ReserveResult.Existing.class);
		}
		assertThat(store.complete(request.id(), request.ownerToken(), response(100))).isTrue();
		this.clock.advance(Duration.ofSeconds(2));
		long visits = store.purgeVisits();
		assertThat(store.purgeExpired(Integer.MAX_VALUE)).as("expired at the end of its retention, as it began")
			.isEqualTo(1);
		assertThat(store.purgeVisits() - visits).as("one place in the expiry order, however often it was beaten")
			.isEqualTo(1);
		assertThat(store.size()).isZero();
		assertThat(store.oldestRecordAge()).as("nothing left in the expiry order").isZero();
		assertThat(store.retainedBytes()).isZero();
	}

	@Test
	void countsIndexAndScopeSharesStayExactWhenManyThreadsWorkOnManyScopes() throws Exception {
		InMemoryIdempotencyStore store = InMemoryIdempotencyStore.builder()
			.clock(this.clock)
			.maxEntries(1_500)
			.maxBytes(600_000)
			.maxSharePerScope(0.4)
			.onFull(InMemoryIdempotencyStore.OnFull.REFUSE)
			.build();
		AtomicInteger scopeRefusals = new AtomicInteger();
		AtomicInteger storeRefusals = new AtomicInteger();
		List<String> scopes = List.of("user:a", "user:b", "user:c", "user:d", "anonymous");
		race(8, 4_000, Duration.ofSeconds(120), (random, mine) -> {
			try {
				int action = random.nextInt(12);
				if (action < 4 || mine.isEmpty()) {
					ReserveRequest request = reserve(
							scopes.get(random.nextBoolean() ? 0 : random.nextInt(scopes.size())),
							Duration.ofMillis(1_000 + random.nextInt(2_000)));
					store.reserve(request);
					mine.add(request);
				}
				else if (action < 7) {
					ReserveRequest request = mine.remove(random.nextInt(mine.size()));
					store.complete(request.id(), request.ownerToken(), response(random.nextInt(3_000)));
				}
				else if (action < 8) {
					ReserveRequest request = mine.remove(random.nextInt(mine.size()));
					store.release(request.id(), request.ownerToken());
				}
				else if (action < 9) {
					ReserveRequest request = mine.get(random.nextInt(mine.size()));
					store.heartbeat(request.id(), request.ownerToken(), Duration.ofSeconds(1));
				}
				else if (action < 10) {
					store.purgeExpired(20);
				}
				else if (action < 11) {
					ReserveRequest request = mine.get(random.nextInt(mine.size()));
					store.recordCompleted(new CompletedRecordRequest(
							new RecordId(request.id().scope(), UUID.randomUUID().toString()), "fp", "op",
							response(random.nextInt(2_000)), Duration.ofMillis(300 + random.nextInt(1_000))));
				}
				else {
					this.clock.advance(Duration.ofMillis(10));
				}
			}
			catch (IdempotencyStoreFullException ex) {
				// Refused, as it should be: by the store's bounds or the scope's share.
				(ex.getMessage().contains("max-share-per-scope") ? scopeRefusals : storeRefusals).incrementAndGet();
			}
			assertThat(store.retainedBytes()).isLessThanOrEqualTo(600_000);
			assertThat(store.size()).isLessThanOrEqualTo(1_500);
		});
		assertThat(store.retainedBytes()).isPositive();
		Map<String, Usage> byScope = store.usageByScope();
		assertThat(byScope.keySet()).isSubsetOf(scopes);
		long entries = 0;
		long bytes = 0;
		for (String scope : scopes) {
			Usage usage = store.usage(scope);
			assertThat(usage).as("usage of " + scope).isEqualTo(byScope.getOrDefault(scope, Usage.NONE));
			assertThat(usage.records())
				.isLessThanOrEqualTo((long) Math.floor(store.maxEntries() * store.maxSharePerScope()));
			assertThat(usage.bytes())
				.isLessThanOrEqualTo((long) Math.floor(store.maxBytes() * store.maxSharePerScope()));
			entries += usage.records();
			bytes += usage.bytes();
		}
		assertThat(entries).isEqualTo(store.size());
		assertThat(bytes).isEqualTo(store.retainedBytes());
		assertThat(scopeRefusals.get()).as("refusals by a scope's share").isPositive();
		assertThat(storeRefusals.get()).as("refusals by the store's bounds").isPositive();
		assertCountsReturnToZero(store, this.clock);
		assertThat(store.usageByScope()).as("no usage kept for scopes that hold nothing").isEmpty();
	}

	/**
	 * Runs {@code steps} steps on each of {@code threads} threads released together, each
	 * with a {@code Random} seeded with its number and a list of the reservations it
	 * holds; the first step that throws (an assertion among them) fails the test.
	 */
	static void race(int threads, int steps, Duration timeout, RaceStep step) throws Exception {
		CyclicBarrier start = new CyclicBarrier(threads);
		ExecutorService pool = Executors.newFixedThreadPool(threads);
		try {
			List<Future<?>> workers = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				Random random = new Random(t);
				workers.add(pool.submit(() -> {
					List<ReserveRequest> mine = new ArrayList<>();
					start.await();
					for (int i = 0; i < steps; i++) {
						step.run(random, mine);
					}
					return null;
				}));
			}
			for (Future<?> worker : workers) {
				worker.get(timeout.toSeconds(), TimeUnit.SECONDS);
			}
		}
		finally {
			pool.shutdownNow();
		}
	}

	/** One step of one thread of {@link #race}. */
	@FunctionalInterface
	interface RaceStep {

		void run(Random random, List<ReserveRequest> mine) throws Exception;

	}

	/**
	 * The running counts are the records held: once every record has expired, the purge
	 * drops as many as were counted and every count is back at zero, with no record left
	 * in the expiry order. Ends what the store holds: the last check of a test (here and
	 * in {@link InMemoryIdempotencyStoreEvictionTests}).
	 */
	static void assertCountsReturnToZero(InMemoryIdempotencyStore store, MutableClock clock) {
		int held = store.size();
		clock.advance(Duration.ofDays(3));
		assertThat(store.purgeExpired(Integer.MAX_VALUE)).as("records dropped, once all expired").isEqualTo(held);
		assertThat(store.size()).isZero();
		assertThat(store.retainedBytes()).isZero();
		assertThat(store.oldestRecordAge()).as("nothing left in the expiry order").isZero();
	}

	@Test
	void theBuilderRefusesBoundsOutOfRangeNamingTheProperty() {
		assertThatIllegalArgumentException().isThrownBy(() -> InMemoryIdempotencyStore.builder().maxEntries(0).build())
			.withMessageContaining("idempotency.store.memory.max-entries");
		assertThatIllegalArgumentException().isThrownBy(() -> InMemoryIdempotencyStore.builder().maxBytes(0).build())
			.withMessageContaining("idempotency.store.memory.max-bytes");
		for (double share : new double[] { 0, -0.5, 1.5, Double.NaN }) {
			assertThatIllegalArgumentException().as("share %s", share)
				.isThrownBy(() -> InMemoryIdempotencyStore.builder().maxSharePerScope(share).build())
				.withMessageContaining("idempotency.store.memory.max-share-per-scope");
		}
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
		return reserve("s", retention);
	}

	private static ReserveRequest reserve(String scope, Duration retention) {
		return new ReserveRequest(new RecordId(scope, UUID.randomUUID().toString()), "fp", "op",
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
