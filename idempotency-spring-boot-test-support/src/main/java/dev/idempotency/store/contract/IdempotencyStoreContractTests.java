package dev.idempotency.store.contract;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.InspectedRecord;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.RecordState;
import dev.idempotency.store.ReserveResult;
import dev.idempotency.store.StoredResponse;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The contract every {@link IdempotencyStore} passes unchanged. A store's test extends
 * this class and says how to make the store; the suite talks to it only through the SPI.
 * Times are real (stores judge leases by their own clock): leases here are short, and
 * {@link #elapse} waits them out. A store whose clock the test controls may override
 * {@link #elapse} to advance it.
 * <p>
 * Every test uses a scope unique to this run, so stores on shared servers see no other
 * run's data. The suite is split by subject into the classes this one extends
 * ({@link StoreContractSupport}, {@link EngineOverStoreContract},
 * {@link SealingContract}, {@link LeaseContract}, {@link AsyncContract}); this one holds
 * record-after-success mode, inspection and removal.
 */
public abstract class IdempotencyStoreContractTests extends AsyncContract {

	// Record-after-success mode: recordCompleted creates a completed record only where no
	// live record is.

	@Test
	void recordingANewKeyStoresItCompleted() {
		RecordId id = newId();
		assertThat(this.store.recordCompleted(completed(id, "fp-a", response(201, "{\"made\":1}"), RETENTION)))
			.as("recorded")
			.isEmpty();
		IdempotencyRecord record = this.store.find(id).orElseThrow();
		assertThat(record.state()).isEqualTo(RecordState.COMPLETED);
		assertThat(record.fingerprint()).isEqualTo("fp-a");
		assertThat(record.operation()).isEqualTo("contract-op");
		assertThat(record.response()).isEqualTo(response(201, "{\"made\":1}"));
		IdempotencyRecord replayed = existing(this.store.reserve(request(id, "fp-a", token(), LONG_LEASE)));
		assertThat(replayed.response()).as("a lease-mode retry replays it").isEqualTo(response(201, "{\"made\":1}"));
	}

	@Test
	void aSecondRecordingChangesNothingAndReturnsTheFirst() {
		RecordId id = newId();
		this.store.recordCompleted(completed(id, "fp-a", response(201, "{\"first\":1}"), RETENTION));
		IdempotencyRecord first = this.store
			.recordCompleted(completed(id, "fp-a", response(409, "{\"second\":2}"), RETENTION))
			.orElseThrow();
		assertThat(first.state()).isEqualTo(RecordState.COMPLETED);
		assertThat(first.response()).isEqualTo(response(201, "{\"first\":1}"));
		IdempotencyRecord other = this.store
			.recordCompleted(completed(id, "fp-b", response(200, "{\"other\":3}"), RETENTION))
			.orElseThrow();
		assertThat(other.fingerprint()).as("another request changes nothing").isEqualTo("fp-a");
		assertThat(this.store.find(id).orElseThrow().response()).isEqualTo(response(201, "{\"first\":1}"));
	}

	@Test
	void recordingOverALiveReservationChangesNothing() {
		RecordId id = newId();
		String owner = token();
		this.store.reserve(request(id, "fp-a", owner, LONG_LEASE));
		IdempotencyRecord reserved = this.store.recordCompleted(completed(id, "fp-a", response(200, "{}"), RETENTION))
			.orElseThrow();
		assertThat(reserved.state()).isEqualTo(RecordState.IN_PROGRESS);
		assertThat(this.store.complete(id, owner, response(201, "{\"owner\":1}"))).as("the owner still completes")
			.isTrue();
		assertThat(this.store.find(id).orElseThrow().response()).isEqualTo(response(201, "{\"owner\":1}"));
	}

	@Test
	void aRecordedKeyCannotBeCompletedReleasedOrBeatenByAnOwnerToken() {
		RecordId id = newId();
		this.store.recordCompleted(completed(id, "fp-a", response(201, "{}"), RETENTION));
		assertThat(this.store.complete(id, token(), response(200, "{\"x\":1}"))).isFalse();
		assertThat(this.store.release(id, token())).isFalse();
		assertThat(this.store.heartbeat(id, token(), LONG_LEASE)).isFalse();
		assertThat(this.store.find(id).orElseThrow().response()).isEqualTo(response(201, "{}"));
	}

	@Test
	void anExpiredRecordIsReplacedByANewRecording() throws Exception {
		RecordId id = newId();
		this.store.recordCompleted(completed(id, "fp-a", response(200, "{\"old\":1}"), SHORT_LEASE));
		elapse(SHORT_LEASE);
		assertThat(this.store.find(id)).isEmpty();
		assertThat(this.store.recordCompleted(completed(id, "fp-b", response(201, "{\"new\":1}"), RETENTION)))
			.isEmpty();
		IdempotencyRecord record = this.store.find(id).orElseThrow();
		assertThat(record.fingerprint()).isEqualTo("fp-b");
		assertThat(record.response()).isEqualTo(response(201, "{\"new\":1}"));
	}

	@Test
	void recordedDataRoundTripsByteExact() {
		byte[] body = new byte[300_000];
		new Random(7).nextBytes(body);
		Map<String, List<String>> headers = new java.util.LinkedHashMap<>();
		headers.put("Content-Type", List.of("application/octet-stream"));
		headers.put("X-Multi", List.of("one", "two", ""));
		StoredResponse original = new StoredResponse(201, headers, body);
		RecordId id = newId();
		assertThat(this.store.recordCompleted(completed(id, "fp", original, RETENTION))).isEmpty();
		StoredResponse replayed = this.store.find(id).orElseThrow().completedResponse();
		assertThat(replayed.status()).isEqualTo(201);
		assertThat(replayed.headers()).containsExactlyEntriesOf(headers);
		assertThat(replayed.body()).isEqualTo(body);
	}

	@Test
	void sixteenThreadsRecordingOneKeyLeaveExactlyOneRecordAndAllSeeIt() throws Exception {
		int threads = 16;
		for (int round = 0; round < 5; round++) {
			RecordId id = newId();
			CyclicBarrier start = new CyclicBarrier(threads);
			ExecutorService pool = Executors.newFixedThreadPool(threads);
			try {
				List<Future<Optional<IdempotencyRecord>>> results = new ArrayList<>();
				for (int i = 0; i < threads; i++) {
					int attempt = i;
					results.add(pool.submit(() -> {
						start.await(10, TimeUnit.SECONDS);
						return this.store.recordCompleted(
								completed(id, "fp", response(200, "{\"attempt\":" + attempt + "}"), RETENTION));
					}));
				}
				int winners = 0;
				List<StoredResponse> seen = new ArrayList<>();
				for (Future<Optional<IdempotencyRecord>> result : results) {
					Optional<IdempotencyRecord> existing = result.get(30, TimeUnit.SECONDS);
					if (existing.isEmpty()) {
						winners++;
					}
					else {
						assertThat(existing.get().state()).isEqualTo(RecordState.COMPLETED);
						seen.add(existing.get().response());
					}
				}
				assertThat(winners).as("exactly one recording wins, round " + round).isEqualTo(1);
				StoredResponse recorded = this.store.find(id).orElseThrow().response();
				assertThat(seen).as("every loser is told the one recorded answer")
					.hasSize(threads - 1)
					.containsOnly(recorded);
			}
			finally {
				pool.shutdownNow();
			}
		}
	}

	@Test
	void anInFlightRecordIsInspectedWithItsOwnerAndCreationTime() {
		RecordId id = newId();
		String owner = token();
		this.store.reserve(request(id, "fp-a", owner, LONG_LEASE));
		InspectedRecord inspected = this.store.inspect(id).orElseThrow();
		assertThat(inspected.record()).isEqualTo(this.store.find(id).orElseThrow());
		assertThat(inspected.ownerToken()).isEqualTo(owner);
		assertThat(inspected.createdAt()).isNotNull()
			.isBefore(inspected.record().leaseExpiresAt())
			.isBefore(inspected.record().expiresAt());
	}

	@Test
	void aCompletedRecordIsInspectedWithoutOwnerAndKeepsItsCreationTime() throws InterruptedException {
		RecordId id = newId();
		String first = token();
		this.store.reserve(request(id, "fp-a", first, SHORT_LEASE));
		java.time.Instant created = this.store.inspect(id).orElseThrow().createdAt();
		elapse(SHORT_LEASE);
		String second = token();
		assertThat(this.store.reserve(request(id, "fp-a", second, LONG_LEASE)))
			.isEqualTo(new ReserveResult.Acquired(true));
		assertThat(this.store.inspect(id).orElseThrow().ownerToken()).isEqualTo(second);
		assertThat(this.store.complete(id, second, response(201, "{\"done\":true}"))).isTrue();
		InspectedRecord inspected = this.store.inspect(id).orElseThrow();
		assertThat(inspected.record().state()).isEqualTo(RecordState.COMPLETED);
		assertThat(inspected.record().completedResponse().status()).isEqualTo(201);
		assertThat(inspected.ownerToken()).isNull();
		assertThat(inspected.createdAt()).as("a take-over keeps the creation time").isEqualTo(created);
	}

	@Test
	void aRecordedResponseIsInspectedWithItsCreationTime() {
		RecordId id = newId();
		assertThat(this.store.recordCompleted(completed(id, "fp-a", response(200, "{}"), RETENTION))).isEmpty();
		InspectedRecord inspected = this.store.inspect(id).orElseThrow();
		assertThat(inspected.record().state()).isEqualTo(RecordState.COMPLETED);
		assertThat(inspected.ownerToken()).isNull();
		assertThat(inspected.createdAt()).isNotNull().isBefore(inspected.record().expiresAt());
	}

	@Test
	void anAbsentOrExpiredRecordIsNeitherInspectedNorRemoved() throws InterruptedException {
		RecordId absent = newId();
		assertThat(this.store.inspect(absent)).isEmpty();
		assertThat(this.store.remove(absent)).isFalse();
		RecordId expired = newId();
		this.store.reserve(request(expired, "fp-a", token(), SHORT_LEASE, SHORT_LEASE));
		elapse(SHORT_LEASE);
		assertThat(this.store.inspect(expired)).isEmpty();
		assertThat(this.store.remove(expired)).isFalse();
		// Replaced by a live one, so that no expired record is left for the purge test.
		this.store.reserve(request(expired, "fp-a", token(), LONG_LEASE));
	}

	@Test
	void removingAnInFlightRecordFreesItsKeyAndFencesItsOwner() {
		RecordId id = newId();
		String owner = token();
		this.store.reserve(request(id, "fp-a", owner, LONG_LEASE));
		assertThat(this.store.remove(id)).isTrue();
		assertThat(this.store.find(id)).isEmpty();
		assertThat(this.store.remove(id)).as("removed once").isFalse();
		String retry = token();
		assertThat(this.store.reserve(request(id, "fp-a", retry, LONG_LEASE)))
			.isEqualTo(new ReserveResult.Acquired(false));
		assertThat(this.store.complete(id, owner, response(200, "{}"))).as("the removed owner stores nothing")
			.isFalse();
		assertThat(this.store.complete(id, retry, response(200, "{}"))).isTrue();
	}

	@Test
	void removingACompletedRecordLetsTheKeyRunAgain() {
		RecordId id = newId();
		String owner = token();
		this.store.reserve(request(id, "fp-a", owner, LONG_LEASE));
		this.store.complete(id, owner, response(201, "{}"));
		assertThat(this.store.remove(id)).isTrue();
		assertThat(this.store.find(id)).isEmpty();
		assertThat(this.store.reserve(request(id, "fp-b", token(), LONG_LEASE)))
			.isEqualTo(new ReserveResult.Acquired(false));
	}

	/**
	 * Whether the store finds a key without its scope
	 * ({@link IdempotencyStore#inspectByKey}); a store that would have to read every
	 * record overrides this and must refuse instead.
	 */
	protected boolean findsAKeyWithoutItsScope() {
		return true;
	}

	@Test
	void aKeyIsFoundInEveryScopeWithoutItsScopeOrRefusedPlainly() throws InterruptedException {
		String key = java.util.UUID.randomUUID().toString();
		if (!findsAKeyWithoutItsScope()) {
			this.store.reserve(request(idInScope("/a", key), "fp-a", token(), LONG_LEASE));
			assertThatExceptionOfType(UnsupportedOperationException.class)
				.isThrownBy(() -> this.store.inspectByKey(key, 10))
				.withMessageContaining("only by its key and scope");
			return;
		}
		RecordId expired = idInScope("/0", key);
		this.store.reserve(request(expired, "fp-0", token(), SHORT_LEASE, SHORT_LEASE));
		RecordId completed = idInScope("/a", key);
		String first = token();
		this.store.reserve(request(completed, "fp-a", first, LONG_LEASE));
		this.store.complete(completed, first, response(201, "{}"));
		RecordId inFlight = idInScope("/b", key);
		String owner = token();
		this.store.reserve(request(inFlight, "fp-b", owner, LONG_LEASE));
		RecordId recorded = idInScope("/c", key);
		this.store.recordCompleted(completed(recorded, "fp-c", response(200, "{}"), RETENTION));
		this.store.reserve(request(idInScope("/a", key + "-other"), "fp-x", token(), LONG_LEASE));
		elapse(SHORT_LEASE);

		List<InspectedRecord> found = this.store.inspectByKey(key, 10);
		assertThat(found).extracting((inspected) -> inspected.record().id())
			.as("live records of the key only, in the order of their scopes")
			.containsExactly(completed, inFlight, recorded);
		assertThat(found.get(0).record().completedResponse().status()).isEqualTo(201);
		assertThat(found.get(0).ownerToken()).isNull();
		assertThat(found.get(0).createdAt()).isNotNull();
		assertThat(found.get(1)).isEqualTo(this.store.inspect(inFlight).orElseThrow());
		assertThat(found.get(1).ownerToken()).isEqualTo(owner);
		assertThat(found.get(2).record().state()).isEqualTo(RecordState.COMPLETED);
		assertThat(this.store.inspectByKey(key, 2)).extracting((inspected) -> inspected.record().id())
			.as("at most as many as asked, the first scopes")
			.containsExactly(completed, inFlight);
		assertThat(this.store.inspectByKey(java.util.UUID.randomUUID().toString(), 10)).isEmpty();
		// Replaced by a live one, so that no expired record is left for the purge test.
		this.store.reserve(request(expired, "fp-0", token(), LONG_LEASE));
	}

	@Test
	void theStoreHasAName() {
		assertThat(this.store.name()).isNotBlank();
	}

}
