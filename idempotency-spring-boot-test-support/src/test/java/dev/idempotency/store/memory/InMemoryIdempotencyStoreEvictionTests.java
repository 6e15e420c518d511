package dev.idempotency.store.memory;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStoreFullException;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.RecordState;
import dev.idempotency.store.ReserveRequest;
import dev.idempotency.store.ReserveResult;
import dev.idempotency.store.StoredResponse;
import dev.idempotency.store.memory.InMemoryIdempotencyStore.OnFull;
import dev.idempotency.store.memory.InMemoryIdempotencyStore.Usage;
import dev.idempotency.store.memory.InMemoryIdempotencyStoreTests.MutableClock;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The in-memory store under sustained load with {@link OnFull#EVICT}: completed records
 * make room, oldest expiry first; live records never do; the per-scope share bites only
 * when scopes compete for a full store.
 */
class InMemoryIdempotencyStoreEvictionTests {

	private static final Duration DAY = Duration.ofDays(1);

	private final MutableClock clock = new MutableClock(Instant.parse("2026-01-01T00:00:00Z"));

	@Test
	void aSingleScopeUnderSustainedLoadIsNeverRefusedAndKeepsTheNewestRecords() {
		// The default share (a quarter) with one scope: before, every new key was refused
		// after a quarter of max-entries, until the oldest record expired a day later.
		InMemoryIdempotencyStore store = InMemoryIdempotencyStore.builder()
			.clock(this.clock)
			.maxEntries(100)
			.maxBytes(Long.MAX_VALUE)
			.maxSharePerScope(0.25)
			.onFull(OnFull.EVICT)
			.build();
		List<RecordId> made = new ArrayList<>();
		for (int i = 0; i < 1_000; i++) {
			made.add(completed(store, "anonymous", 100));
			this.clock.advance(Duration.ofSeconds(1));
			assertThat(store.size()).isLessThanOrEqualTo(100);
		}
		assertThat(store.size()).isEqualTo(100);
		assertThat(store.evictions()).isEqualTo(900);
		assertThat(made.subList(0, 900)).allSatisfy((id) -> assertThat(store.find(id)).as("evicted").isEmpty());
		assertThat(made.subList(900, 1_000)).allSatisfy((id) -> assertThat(store.find(id)).isPresent());
		assertThat(store.oldestRecordAge()).as("the retention in effect: the last 100 records, one a second")
			.isEqualTo(Duration.ofSeconds(100));
		assertInvariants(store);
	}

	@Test
	void aRetryOfAnEvictedKeyIsANewKeyAgain() {
		InMemoryIdempotencyStore store = InMemoryIdempotencyStore.builder()
			.clock(this.clock)
			.maxEntries(2)
			.maxBytes(Long.MAX_VALUE)
			.maxSharePerScope(1.0)
			.onFull(OnFull.EVICT)
			.build();
		ReserveRequest first = reserve("s", DAY);
		store.reserve(first);
		store.complete(first.id(), first.ownerToken(), response(10));
		completed(store, "s", 10);
		completed(store, "s", 10);
		assertThat(store.find(first.id())).isEmpty();
		assertThat(store.reserve(first)).isEqualTo(new ReserveResult.Acquired(false));
	}

	@Test
	void liveRecordsAreNeverEvictedAndAStoreFullOfThemRefusesForAMoment() {
		InMemoryIdempotencyStore store = InMemoryIdempotencyStore.builder()
			.clock(this.clock)
			.maxEntries(4)
			.maxBytes(Long.MAX_VALUE)
			.maxSharePerScope(1.0)
			.onFull(OnFull.EVICT)
			.build();
		ReserveRequest oldestLive = reserve("s", DAY);
		store.reserve(oldestLive);
		RecordId done = completed(store, "s", 10);
		ReserveRequest live2 = reserve("s", DAY);
		ReserveRequest live3 = reserve("s", DAY);
		store.reserve(live2);
		store.reserve(live3);
		ReserveRequest live4 = reserve("s", DAY);
		assertThat(store.reserve(live4)).isInstanceOf(ReserveResult.Acquired.class);
		assertThat(store.find(done)).as("the completed record made room").isEmpty();
		assertThat(store.find(oldestLive.id())).as("though older, the live record stays")
			.hasValueSatisfying((record) -> assertThat(record.state()).isEqualTo(RecordState.IN_PROGRESS));
		IdempotencyStoreFullException refusal = assertThatExceptionOfType(IdempotencyStoreFullException.class)
			.isThrownBy(() -> store.reserve(reserve("s", DAY)))
			.withMessageContaining("max-entries")
			.withMessageContaining("no completed record to evict")
			.actual();
		assertThat(refusal.retryAfter()).as("live records end within their lease, not in a day")
			.isEqualTo(Duration.ofSeconds(1));
		assertThat(store.size()).isEqualTo(4);
		assertThat(store.evictions()).isEqualTo(1);
		store.complete(live2.id(), live2.ownerToken(), response(10));
		assertThat(store.reserve(reserve("s", DAY))).isInstanceOf(ReserveResult.Acquired.class);
		assertThat(store.find(live2.id())).isEmpty();
		assertInvariants(store);
	}

	@Test
	void aLargeResponseEvictsAsManyRecordsAsItNeedsBytes() {
		InMemoryIdempotencyStore store = InMemoryIdempotencyStore.builder()
			.clock(this.clock)
			.maxEntries(1_000)
			.maxBytes(100_000)
			.maxSharePerScope(1.0)
			.onFull(OnFull.EVICT)
			.build();
		List<RecordId> small = new ArrayList<>();
		while (store.retainedBytes() < 90_000) {
			small.add(completed(store, "s", 1_000));
		}
		long perSmall = store.retainedBytes() / small.size();
		RecordId large = completed(store, "s", 50_000);
		assertThat(store.find(large))
			.hasValueSatisfying((record) -> assertThat(record.completedResponse().body()).hasSize(50_000));
		long evicted = small.stream().filter((id) -> store.find(id).isEmpty()).count();
		assertThat(evicted).isEqualTo(store.evictions()).isPositive();
		assertThat(small.subList(0, (int) evicted)).as("the oldest first")
			.allSatisfy((id) -> assertThat(store.find(id)).isEmpty());
		assertThat(store.retainedBytes()).isLessThanOrEqualTo(100_000)
			.as("no more evicted than needed")
			.isGreaterThan(100_000 - perSmall);
		assertInvariants(store);
	}

	@Test
	void aResponseLargerThanTheWholeStoreIsRefusedWithoutEvictingAnything() {
		InMemoryIdempotencyStore store = InMemoryIdempotencyStore.builder()
			.clock(this.clock)
			.maxEntries(1_000)
			.maxBytes(100_000)
			.maxSharePerScope(1.0)
			.onFull(OnFull.EVICT)
			.build();
		RecordId kept = completed(store, "s", 1_000);
		ReserveRequest request = reserve("s", DAY);
		store.reserve(request);
		assertThatExceptionOfType(IdempotencyStoreFullException.class)
			.isThrownBy(() -> store.complete(request.id(), request.ownerToken(), response(150_000)))
			.withMessageContaining("max-bytes");
		assertThat(store.find(kept)).isPresent();
		assertThat(store.find(request.id())).as("released for a retry").isEmpty();
		assertThat(store.evictions()).isZero();
	}

	@Test
	void theShareBitesOnlyWhenScopesCompete() {
		InMemoryIdempotencyStore store = InMemoryIdempotencyStore.builder()
			.clock(this.clock)
			.maxEntries(10)
			.maxBytes(Long.MAX_VALUE)
			.maxSharePerScope(0.5)
			.onFull(OnFull.EVICT)
			.build();
		List<RecordId> mallory = new ArrayList<>();
		for (int i = 0; i < 10; i++) {
			mallory.add(completed(store, "mallory", 10));
		}
		assertThat(store.size()).as("alone, a scope fills the whole store").isEqualTo(10);
		assertThat(store.evictions()).isZero();

		List<RecordId> alice = new ArrayList<>();
		for (int i = 0; i < 5; i++) {
			alice.add(completed(store, "alice", 10));
		}
		assertThat(mallory.subList(0, 5)).as("alice, within her share, took room from mallory's oldest")
			.allSatisfy((id) -> assertThat(store.find(id)).isEmpty());
		assertThat(mallory.subList(5, 10)).allSatisfy((id) -> assertThat(store.find(id)).isPresent());

		RecordId mallorysNext = completed(store, "mallory", 10);
		assertThat(alice).as("mallory, at her share, makes room from her own records, never alice's")
			.allSatisfy((id) -> assertThat(store.find(id)).isPresent());
		assertThat(store.find(mallory.get(5))).isEmpty();
		assertThat(store.find(mallorysNext)).isPresent();

		RecordId alicesSixth = completed(store, "alice", 10);
		assertThat(store.find(alice.get(0))).as("alice, at her share, evicts her own oldest").isEmpty();
		assertThat(store.find(alicesSixth)).isPresent();
		assertThat(store.usage("alice").records()).isEqualTo(5);
		assertThat(store.usage("mallory").records()).isEqualTo(5);
		assertInvariants(store);
	}

	@Test
	void aScopePastItsShareWhoseRecordsAreAllLiveIsRefusedWhileOthersAreServed() {
		InMemoryIdempotencyStore store = InMemoryIdempotencyStore.builder()
			.clock(this.clock)
			.maxEntries(10)
			.maxBytes(Long.MAX_VALUE)
			.maxSharePerScope(0.5)
			.onFull(OnFull.EVICT)
			.build();
		for (int i = 0; i < 5; i++) {
			completed(store, "alice", 10);
		}
		for (int i = 0; i < 5; i++) {
			store.reserve(reserve("mallory", DAY));
		}
		assertThatExceptionOfType(IdempotencyStoreFullException.class)
			.isThrownBy(() -> store.reserve(reserve("mallory", DAY)));
		assertThat(store.usage("alice").records()).as("mallory could not take alice's records").isEqualTo(5);
		assertThat(store.reserve(reserve("alice", DAY))).isInstanceOf(ReserveResult.Acquired.class);
		assertInvariants(store);
	}

	@Test
	void refuseKeepsEveryRecordsRetention() {
		InMemoryIdempotencyStore store = InMemoryIdempotencyStore.builder()
			.clock(this.clock)
			.maxEntries(3)
			.maxBytes(Long.MAX_VALUE)
			.maxSharePerScope(1.0)
			.onFull(OnFull.REFUSE)
			.build();
		for (int i = 0; i < 3; i++) {
			completed(store, "s", 10);
		}
		IdempotencyStoreFullException refusal = assertThatExceptionOfType(IdempotencyStoreFullException.class)
			.isThrownBy(() -> store.reserve(reserve("s", DAY)))
			.actual();
		assertThat(refusal.retryAfter()).as("until the oldest record expires").isEqualTo(DAY);
		assertThat(store.evictions()).isZero();
	}

	@Test
	void countsStayExactAndLiveRecordsSurviveWhenManyThreadsEvict() throws Exception {
		InMemoryIdempotencyStore store = InMemoryIdempotencyStore.builder()
			.clock(this.clock)
			.maxEntries(300)
			.maxBytes(200_000)
			.maxSharePerScope(0.4)
			.onFull(OnFull.EVICT)
			.build();
		List<String> scopes = List.of("user:a", "user:b", "user:c", "anonymous");
		Map<RecordId, String> live = new ConcurrentHashMap<>();
		AtomicInteger refusals = new AtomicInteger();
		AtomicInteger lost = new AtomicInteger();
		InMemoryIdempotencyStoreTests.race(8, 5_000, Duration.ofSeconds(120), (random, mine) -> {
			try {
				if (mine.size() < 5 && random.nextInt(3) > 0) {
					ReserveRequest request = reserve(scopes.get(random.nextInt(scopes.size())), DAY);
					store.reserve(request);
					mine.add(request);
					live.put(request.id(), request.ownerToken());
				}
				else if (!mine.isEmpty()) {
					ReserveRequest request = mine.remove(random.nextInt(mine.size()));
					// Still there: a live record is never evicted.
					if (store.find(request.id())
						.map(IdempotencyRecord::state)
						.orElse(null) != RecordState.IN_PROGRESS) {
						lost.incrementAndGet();
					}
					live.remove(request.id());
					store.complete(request.id(), request.ownerToken(), response(random.nextInt(2_000)));
				}
			}
			catch (IdempotencyStoreFullException ex) {
				refusals.incrementAndGet();
			}
			assertThat(store.size()).isLessThanOrEqualTo(300);
			assertThat(store.retainedBytes()).isLessThanOrEqualTo(200_000);
		});
		assertThat(lost.get()).as("live records evicted").isZero();
		assertThat(store.evictions()).as("completed records made room").isPositive();
		assertThat(refusals.get()).as("at most 40 live records in a store of 300: never full of live ones").isZero();
		for (RecordId id : live.keySet()) {
			assertThat(store.find(id)).isPresent();
		}
		assertInvariants(store);
	}

	/**
	 * The running counts add up, the scopes' to the store's, and they are the records
	 * held: once every record has expired, the purge drops as many as were counted, and
	 * every count is back at zero, with no record left in the expiry order and no scope
	 * counted. Ends what the store holds: the last check of a test.
	 */
	private void assertInvariants(InMemoryIdempotencyStore store) {
		Collection<Usage> usages = store.usageByScope().values();
		if (store.maxSharePerScope() < 1) {
			assertThat(usages).allSatisfy((usage) -> assertThat(usage.records()).isPositive());
			assertThat(usages.stream().mapToLong(Usage::records).sum()).isEqualTo(store.size());
			assertThat(usages.stream().mapToLong(Usage::bytes).sum()).isEqualTo(store.retainedBytes());
		}
		else {
			assertThat(usages).as("no counts per scope without a share").isEmpty();
		}
		InMemoryIdempotencyStoreTests.assertCountsReturnToZero(store, this.clock);
		assertThat(store.usageByScope()).isEmpty();
	}

	private RecordId completed(InMemoryIdempotencyStore store, String scope, int bodyBytes) {
		ReserveRequest request = reserve(scope, DAY);
		assertThat(store.reserve(request)).isInstanceOf(ReserveResult.Acquired.class);
		assertThat(store.complete(request.id(), request.ownerToken(), response(bodyBytes))).isTrue();
		return request.id();
	}

	private static StoredResponse response(int bodyBytes) {
		byte[] body = new byte[bodyBytes];
		new Random(bodyBytes).nextBytes(body);
		return new StoredResponse(200, Map.of("Content-Type", List.of("application/json")), body);
	}

	private static ReserveRequest reserve(String scope, Duration retention) {
		return new ReserveRequest(new RecordId(scope, UUID.randomUUID().toString()), "fp", "op",
				UUID.randomUUID().toString(), Duration.ofSeconds(1), retention);
	}

}
