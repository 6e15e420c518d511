package dev.idempotency.store.contract;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.RecordState;
import dev.idempotency.store.ReserveResult;
import dev.idempotency.store.StoredResponse;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Lease mode's transitions: reserve, take over, complete, release, heartbeat, expiry and
 * purge, racing threads included. Part of {@link IdempotencyStoreContractTests}: a
 * store's test extends that class, not this one.
 */
public abstract class LeaseContract extends SealingContract {

	@Test
	void reservingANewKeyAcquiresIt() {
		RecordId id = newId();
		assertThat(this.store.reserve(request(id, "fp-a", token(), LONG_LEASE)))
			.isEqualTo(new ReserveResult.Acquired(false));
		IdempotencyRecord record = this.store.find(id).orElseThrow();
		assertThat(record.state()).isEqualTo(RecordState.IN_PROGRESS);
		assertThat(record.fingerprint()).isEqualTo("fp-a");
		assertThat(record.operation()).isEqualTo("contract-op");
		assertThat(record.response()).isNull();
	}

	@Test
	void aLiveReservationIsReportedAndNotChanged() {
		RecordId id = newId();
		this.store.reserve(request(id, "fp-a", token(), LONG_LEASE));
		IdempotencyRecord same = existing(this.store.reserve(request(id, "fp-a", token(), LONG_LEASE)));
		assertThat(same.state()).isEqualTo(RecordState.IN_PROGRESS);
		assertThat(same.fingerprint()).isEqualTo("fp-a");
		IdempotencyRecord other = existing(this.store.reserve(request(id, "fp-b", token(), LONG_LEASE)));
		assertThat(other.fingerprint()).as("another request changes nothing").isEqualTo("fp-a");
	}

	@Test
	void theSameKeyInAnotherScopeIsAnotherRecord() {
		RecordId id = newId();
		RecordId otherScope = new RecordId(id.scope() + "-other", id.key());
		String owner = token();
		this.store.reserve(request(id, "fp-a", owner, LONG_LEASE));
		assertThat(this.store.reserve(request(otherScope, "fp-a", token(), LONG_LEASE)))
			.isEqualTo(new ReserveResult.Acquired(false));
		assertThat(this.store.complete(id, owner, response(201, "{\"mine\":true}"))).isTrue();
		assertThat(this.store.find(otherScope).orElseThrow().state()).isEqualTo(RecordState.IN_PROGRESS);
	}

	@Test
	void sixtyFourThreadsRacingForOneKeyGiveExactlyOneOwner() throws Exception {
		RecordId id = newId();
		int threads = 64;
		CyclicBarrier start = new CyclicBarrier(threads);
		ExecutorService pool = Executors.newFixedThreadPool(threads);
		try {
			List<Future<ReserveResult>> results = new ArrayList<>();
			for (int i = 0; i < threads; i++) {
				results.add(pool.submit(() -> {
					start.await(10, TimeUnit.SECONDS);
					return this.store.reserve(request(id, "fp-a", token(), LONG_LEASE));
				}));
			}
			int owners = 0;
			int existing = 0;
			for (Future<ReserveResult> result : results) {
				ReserveResult outcome = result.get(60, TimeUnit.SECONDS);
				if (outcome instanceof ReserveResult.Acquired acquired) {
					assertThat(acquired.takenOver()).isFalse();
					owners++;
				}
				else {
					assertThat(existing(outcome).state()).isEqualTo(RecordState.IN_PROGRESS);
					existing++;
				}
			}
			assertThat(owners).isEqualTo(1);
			assertThat(existing).isEqualTo(threads - 1);
		}
		finally {
			pool.shutdownNow();
		}
	}

	@Test
	void manyThreadsOverFewKeysRunEachOperationExactlyOnce() throws Exception {
		int threads = 16;
		int keys = 8;
		int rounds = 40;
		List<RecordId> ids = new ArrayList<>();
		for (int i = 0; i < keys; i++) {
			ids.add(newId());
		}
		Map<RecordId, AtomicInteger> executions = new ConcurrentHashMap<>();
		AtomicInteger replays = new AtomicInteger();
		ExecutorService pool = Executors.newFixedThreadPool(threads);
		CountDownLatch done = new CountDownLatch(threads);
		List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
		try {
			for (int t = 0; t < threads; t++) {
				long seed = t;
				pool.execute(() -> {
					Random random = new Random(seed);
					try {
						for (int r = 0; r < rounds; r++) {
							RecordId id = ids.get(random.nextInt(keys));
							String owner = token();
							ReserveResult result = this.store.reserve(request(id, "fp", owner, LONG_LEASE));
							if (result instanceof ReserveResult.Acquired) {
								int count = executions.computeIfAbsent(id, (k) -> new AtomicInteger())
									.incrementAndGet();
								if (!this.store.complete(id, owner, response(200, "{\"run\":" + count + "}"))) {
									throw new AssertionError("owner could not complete " + id);
								}
							}
							else if (((ReserveResult.Existing) result).record().state() == RecordState.COMPLETED) {
								replays.incrementAndGet();
							}
						}
					}
					catch (Throwable ex) {
						failures.add(ex);
					}
					finally {
						done.countDown();
					}
				});
			}
			assertThat(done.await(120, TimeUnit.SECONDS)).isTrue();
		}
		finally {
			pool.shutdownNow();
		}
		assertThat(failures).isEmpty();
		assertThat(executions).hasSize(keys);
		executions.values().forEach((count) -> assertThat(count.get()).isEqualTo(1));
		for (RecordId id : ids) {
			StoredResponse stored = this.store.find(id).orElseThrow().completedResponse();
			assertThat(new String(stored.body(), java.nio.charset.StandardCharsets.UTF_8)).isEqualTo("{\"run\":1}");
		}
		assertThat(replays.get()).isPositive();
	}

	@Test
	void anExpiredLeaseIsTakenOverOnlyAfterItExpires() throws Exception {
		RecordId id = newId();
		// Long enough for two calls on a loaded machine: with the 800 ms lease the first
		// call once returned so late (H2 through R2DBC, a CI run beside other builds)
		// that the lease had run out before the second was made.
		Duration lease = Duration.ofSeconds(3);
		this.store.reserve(request(id, "fp-a", token(), lease));
		assertThat(existing(this.store.reserve(request(id, "fp-a", token(), lease))).state())
			.isEqualTo(RecordState.IN_PROGRESS);
		elapse(lease);
		assertThat(this.store.reserve(request(id, "fp-a", token(), LONG_LEASE)))
			.isEqualTo(new ReserveResult.Acquired(true));
		assertThat(existing(this.store.reserve(request(id, "fp-a", token(), LONG_LEASE))).state())
			.as("the new owner's lease is live")
			.isEqualTo(RecordState.IN_PROGRESS);
	}

	@Test
	void anExpiredLeaseIsNotTakenOverByAnotherRequest() throws Exception {
		RecordId id = newId();
		this.store.reserve(request(id, "fp-a", token(), SHORT_LEASE));
		elapse(SHORT_LEASE);
		IdempotencyRecord record = existing(this.store.reserve(request(id, "fp-b", token(), LONG_LEASE)));
		assertThat(record.fingerprint()).isEqualTo("fp-a");
	}

	@Test
	void aStaleOwnerChangesNothingAfterATakeover() throws Exception {
		RecordId id = newId();
		String stale = token();
		String fresh = token();
		this.store.reserve(request(id, "fp-a", stale, SHORT_LEASE));
		elapse(SHORT_LEASE);
		assertThat(this.store.reserve(request(id, "fp-a", fresh, LONG_LEASE)))
			.isEqualTo(new ReserveResult.Acquired(true));

		assertThat(this.store.heartbeat(id, stale, LONG_LEASE)).isFalse();
		assertThat(this.store.complete(id, stale, response(201, "{\"stale\":true}"))).isFalse();
		assertThat(this.store.release(id, stale)).isFalse();
		assertThat(this.store.find(id).orElseThrow().state()).isEqualTo(RecordState.IN_PROGRESS);

		assertThat(this.store.complete(id, fresh, response(201, "{\"fresh\":true}"))).isTrue();
		assertThat(this.store.find(id).orElseThrow().response()).isEqualTo(response(201, "{\"fresh\":true}"));
	}

	@Test
	void anotherTokenCannotCompleteReleaseOrHeartbeat() {
		RecordId id = newId();
		String owner = token();
		this.store.reserve(request(id, "fp-a", owner, LONG_LEASE));
		assertThat(this.store.complete(id, token(), response(200, "{}"))).isFalse();
		assertThat(this.store.release(id, token())).isFalse();
		assertThat(this.store.heartbeat(id, token(), LONG_LEASE)).isFalse();
		IdempotencyRecord record = this.store.find(id).orElseThrow();
		assertThat(record.state()).isEqualTo(RecordState.IN_PROGRESS);
		assertThat(record.response()).isNull();
	}

	@Test
	void transitionsOnAMissingRecordReturnFalse() {
		RecordId id = newId();
		assertThat(this.store.complete(id, token(), response(200, "{}"))).isFalse();
		assertThat(this.store.release(id, token())).isFalse();
		assertThat(this.store.heartbeat(id, token(), LONG_LEASE)).isFalse();
		assertThat(this.store.find(id)).isEmpty();
	}

	@Test
	void aCompletedRecordIsReplayedAndCannotBeCompletedAgain() {
		RecordId id = newId();
		String owner = token();
		this.store.reserve(request(id, "fp-a", owner, LONG_LEASE));
		assertThat(this.store.complete(id, owner, response(201, "{\"first\":1}"))).isTrue();
		assertThat(this.store.complete(id, owner, response(200, "{\"second\":2}"))).isFalse();
		assertThat(this.store.release(id, owner)).as("a completed record is final").isFalse();
		assertThat(this.store.heartbeat(id, owner, LONG_LEASE)).isFalse();

		IdempotencyRecord record = existing(this.store.reserve(request(id, "fp-a", token(), LONG_LEASE)));
		assertThat(record.state()).isEqualTo(RecordState.COMPLETED);
		assertThat(record.fingerprint()).isEqualTo("fp-a");
		assertThat(record.response()).isEqualTo(response(201, "{\"first\":1}"));
	}

	@Test
	void aCompletedRecordIsNeverTakenOverEvenAfterItsLease() throws Exception {
		RecordId id = newId();
		String owner = token();
		this.store.reserve(request(id, "fp-a", owner, SHORT_LEASE));
		this.store.complete(id, owner, response(204, ""));
		elapse(SHORT_LEASE);
		assertThat(existing(this.store.reserve(request(id, "fp-a", token(), LONG_LEASE))).state())
			.isEqualTo(RecordState.COMPLETED);
	}

	@Test
	void replayDataRoundTripsByteExact() {
		byte[] body = new byte[300_000];
		new Random(42).nextBytes(body);
		for (int i = 0; i < 256; i++) {
			body[i] = (byte) i;
		}
		Map<String, List<String>> headers = new java.util.LinkedHashMap<>();
		headers.put("Content-Type", List.of("application/octet-stream"));
		headers.put("Location", List.of("/v1/namespaces/ns/tables/t%1Fx?a=b&c=ü"));
		headers.put("X-Multi", List.of("one", "two", ""));
		StoredResponse binary = new StoredResponse(201, headers, body);
		StoredResponse compressible = new StoredResponse(200, Map.of("ETag", List.of("\"v1\"")),
				"{\"metadata\":\"aaaaaaaaaa\"}".repeat(5_000).getBytes(java.nio.charset.StandardCharsets.UTF_8));
		StoredResponse empty = new StoredResponse(204, Map.of(), new byte[0]);
		for (StoredResponse original : List.of(binary, compressible, empty)) {
			RecordId id = newId();
			String owner = token();
			this.store.reserve(request(id, "fp", owner, LONG_LEASE));
			assertThat(this.store.complete(id, owner, original)).isTrue();
			StoredResponse replayed = existing(this.store.reserve(request(id, "fp", token(), LONG_LEASE)))
				.completedResponse();
			assertThat(replayed.status()).isEqualTo(original.status());
			assertThat(replayed.headers()).containsExactlyEntriesOf(original.headers());
			assertThat(replayed.body()).isEqualTo(original.body());
		}
	}

	@Test
	void releaseDeletesSoTheNextRequestRunsAgain() {
		RecordId id = newId();
		String owner = token();
		this.store.reserve(request(id, "fp-a", owner, LONG_LEASE));
		assertThat(this.store.release(id, owner)).isTrue();
		assertThat(this.store.find(id)).isEmpty();
		assertThat(this.store.reserve(request(id, "fp-b", token(), LONG_LEASE)))
			.isEqualTo(new ReserveResult.Acquired(false));
	}

	@Test
	void aHeartbeatKeepsTheLeaseAlive() throws Exception {
		RecordId id = newId();
		String owner = token();
		this.store.reserve(request(id, "fp-a", owner, SHORT_LEASE));
		assertThat(this.store.heartbeat(id, owner, LONG_LEASE)).isTrue();
		elapse(SHORT_LEASE);
		assertThat(existing(this.store.reserve(request(id, "fp-a", token(), LONG_LEASE))).state())
			.as("not taken over while the heartbeat's lease lives")
			.isEqualTo(RecordState.IN_PROGRESS);
		assertThat(this.store.complete(id, owner, response(200, "{}"))).isTrue();
	}

	@Test
	void anExpiredRecordIsGoneAndItsKeyIsNew() throws Exception {
		RecordId id = newId();
		String owner = token();
		this.store.reserve(request(id, "fp-a", owner, SHORT_LEASE, SHORT_LEASE));
		this.store.complete(id, owner, response(200, "{}"));
		elapse(SHORT_LEASE);
		assertThat(this.store.find(id)).isEmpty();
		assertThat(this.store.reserve(request(id, "fp-b", token(), LONG_LEASE)))
			.isEqualTo(new ReserveResult.Acquired(false));
		assertThat(this.store.find(id).orElseThrow().fingerprint()).isEqualTo("fp-b");
	}

	@Test
	void purgeRemovesOnlyExpiredRecordsInBatches() throws Exception {
		List<RecordId> expiring = new ArrayList<>();
		for (int i = 0; i < 5; i++) {
			RecordId id = newId();
			String owner = token();
			this.store.reserve(request(id, "fp", owner, SHORT_LEASE, SHORT_LEASE));
			this.store.complete(id, owner, response(200, "{}"));
			expiring.add(id);
		}
		RecordId live = newId();
		String owner = token();
		this.store.reserve(request(live, "fp", owner, LONG_LEASE));
		this.store.complete(live, owner, response(200, "{\"live\":true}"));
		elapse(SHORT_LEASE);

		int first = this.store.purgeExpired(2);
		assertThat(first).as("one batch deletes at most its size").isBetween(0, 2);
		int total = first;
		for (int i = 0; i < 10; i++) {
			total += this.store.purgeExpired(2);
		}
		assertThat(total).as("only expired records, each once").isLessThanOrEqualTo(5);
		for (RecordId id : expiring) {
			assertThat(this.store.find(id)).isEmpty();
		}
		Optional<IdempotencyRecord> kept = this.store.find(live);
		assertThat(kept).isPresent();
		assertThat(kept.get().response()).isEqualTo(response(200, "{\"live\":true}"));
	}

}
