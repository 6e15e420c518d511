package dev.idempotency.store.contract;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.idempotency.core.ExecutionResult;
import dev.idempotency.core.IdempotencyError;
import dev.idempotency.core.IdempotencyErrorType;
import dev.idempotency.core.IdempotencyListener;
import dev.idempotency.core.IdempotencyOutcome;
import dev.idempotency.core.IdempotencySettings;
import dev.idempotency.core.IdempotencySettings.FailureMode;
import dev.idempotency.core.IdempotencySettings.Mode;
import dev.idempotency.core.KeyFormat;
import dev.idempotency.core.internal.Answer;
import dev.idempotency.core.internal.Decision;
import dev.idempotency.core.internal.IdempotencyEngine;
import dev.idempotency.core.internal.IdempotentCall;
import dev.idempotency.core.internal.Reservation;
import dev.idempotency.store.CompletedRecordRequest;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.IdempotencyStoreException;
import dev.idempotency.store.InspectedRecord;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.RecordState;
import dev.idempotency.store.ReserveRequest;
import dev.idempotency.store.ReserveResult;
import dev.idempotency.store.StoredResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The contract every {@link IdempotencyStore} passes unchanged. A store's test extends
 * this class and says how to make the store; the suite talks to it only through the SPI.
 * Times are real (stores judge leases by their own clock): leases here are short, and
 * {@link #elapse} waits them out. A store whose clock the test controls may override
 * {@link #elapse} to advance it.
 * <p>
 * Every test uses a scope unique to this run, so stores on shared servers see no other
 * run's data.
 */
public abstract class IdempotencyStoreContractTests {

	/** A lease long enough that it never runs out by accident during a test step. */
	protected static final Duration LONG_LEASE = Duration.ofMinutes(5);

	/** A lease short enough to wait out. */
	protected static final Duration SHORT_LEASE = Duration.ofMillis(800);

	protected static final Duration RETENTION = Duration.ofMinutes(10);

	protected IdempotencyStore store;

	private final String scope = "contract-" + UUID.randomUUID();

	/** Makes the store under test; called before each test. */
	protected abstract IdempotencyStore createStore() throws Exception;

	/** Releases what {@link #createStore()} made; called after each test. */
	protected void destroyStore(IdempotencyStore store) throws Exception {
	}

	/** Lets {@code duration} pass by the store's clock. */
	protected void elapse(Duration duration) throws InterruptedException {
		Thread.sleep(duration.toMillis() + 150);
	}

	@BeforeEach
	void setUpStore() throws Exception {
		this.store = createStore();
	}

	@AfterEach
	void tearDownStore() throws Exception {
		destroyStore(this.store);
	}

	protected RecordId newId() {
		return new RecordId(this.scope, UUID.randomUUID().toString());
	}

	protected static String token() {
		return UUID.randomUUID().toString();
	}

	protected static ReserveRequest request(RecordId id, String fingerprint, String owner, Duration lease,
			Duration retention) {
		return new ReserveRequest(id, fingerprint, "contract-op", owner, lease, retention);
	}

	protected static ReserveRequest request(RecordId id, String fingerprint, String owner, Duration lease) {
		return request(id, fingerprint, owner, lease, RETENTION);
	}

	protected static StoredResponse response(int status, String body) {
		return new StoredResponse(status, Map.of("Content-Type", List.of("application/json")),
				body.getBytes(java.nio.charset.StandardCharsets.UTF_8));
	}

	private static IdempotencyRecord existing(ReserveResult result) {
		assertThat(result).isInstanceOf(ReserveResult.Existing.class);
		return ((ReserveResult.Existing) result).record();
	}

	/**
	 * The engine over this store, in each mode. Lease mode runs an operation once per
	 * key; record-after-success mode may run racing first attempts several times, and
	 * answers every attempt and retry with the one response recorded first.
	 */
	@Nested
	class EngineInEachMode {

		private final List<IdempotencyEngine> engines = new ArrayList<>();

		private final Map<Object, AtomicInteger> events = new ConcurrentHashMap<>();

		private final FailingStore failing = new FailingStore();

		@AfterEach
		void closeEngines() {
			this.engines.forEach(IdempotencyEngine::close);
		}

		private IdempotencyEngine engine(Mode mode, FailureMode failureMode, Duration inFlightWait) {
			IdempotencySettings settings = IdempotencySettings.builder()
				.mode(mode)
				.failureMode(failureMode)
				.inFlightWait(inFlightWait)
				.build();
			IdempotencyEngine engine = new IdempotencyEngine(this.failing, settings, Clock.systemUTC(),
					new IdempotencyListener() {

						@Override
						public void onOutcome(IdempotencyOutcome outcome, String operation) {
							count(outcome);
						}

						@Override
						public void onExecutionFinished(ExecutionResult result, String operation) {
							count(result);
						}

					});
			this.engines.add(engine);
			return engine;
		}

		private IdempotencyStore store() {
			return IdempotencyStoreContractTests.this.store;
		}

		private IdempotencyEngine engine(Mode mode) {
			return engine(mode, FailureMode.FAIL_CLOSED, Duration.ZERO);
		}

		private void count(Object event) {
			this.events.computeIfAbsent(event, (key) -> new AtomicInteger()).incrementAndGet();
		}

		private int counted(Object event) {
			AtomicInteger count = this.events.get(event);
			return (count != null) ? count.get() : 0;
		}

		private Decision begin(IdempotencyEngine engine, RecordId id, String fingerprint) {
			return engine.begin(new IdempotentCall(id.scope(), List.of(id.key()), KeyFormat.OPAQUE, false,
					"contract-op", () -> fingerprint));
		}

		private Reservation proceeds(Decision decision) {
			assertThat(decision).isInstanceOf(Decision.Proceed.class);
			Reservation reservation = ((Decision.Proceed) decision).reservation();
			assertThat(reservation).isNotNull();
			return java.util.Objects.requireNonNull(reservation);
		}

		private StoredResponse replayed(Decision decision) {
			assertThat(decision).isInstanceOf(Decision.Replay.class);
			return ((Decision.Replay) decision).response();
		}

		private IdempotencyError rejected(Decision decision) {
			assertThat(decision).isInstanceOf(Decision.Reject.class);
			return ((Decision.Reject) decision).error();
		}

		@ParameterizedTest
		@EnumSource(Mode.class)
		void aFirstCallRunsAndItsRetryIsReplayedByteExact(Mode mode) {
			IdempotencyEngine engine = engine(mode);
			RecordId id = newId();
			StoredResponse created = new StoredResponse(201,
					Map.of("Content-Type", List.of("application/octet-stream"), "Location", List.of("/things/1")),
					new byte[] { 0, 1, (byte) 0xff, 0x7f, 10, 13 });
			Reservation reservation = proceeds(begin(engine, id, "fp-a"));
			assertThat(engine.succeeded(reservation, created)).isEqualTo(new Answer.Own(created));
			assertThat(replayed(begin(engine, id, "fp-a"))).isEqualTo(created);
			assertThat(store().find(id)).get()
				.satisfies((record) -> assertThat(record.state()).isEqualTo(RecordState.COMPLETED));
			assertThat(counted(ExecutionResult.COMPLETED)).isOne();
			assertThat(counted(IdempotencyOutcome.REPLAYED)).isOne();
		}

		@ParameterizedTest
		@EnumSource(Mode.class)
		void theKeyWithAnotherRequestIsRefused422AndChangesNothing(Mode mode) {
			IdempotencyEngine engine = engine(mode);
			RecordId id = newId();
			engine.succeeded(proceeds(begin(engine, id, "fp-a")), response(200, "{\"a\":1}"));
			IdempotencyError error = rejected(begin(engine, id, "fp-b"));
			assertThat(error.type()).isEqualTo(IdempotencyErrorType.KEY_REUSED);
			assertThat(error.status()).isEqualTo(422);
			assertThat(replayed(begin(engine, id, "fp-a"))).isEqualTo(response(200, "{\"a\":1}"));
		}

		@ParameterizedTest
		@EnumSource(Mode.class)
		void aNonFinalAnswerIsNotKeptSoItsRetryRunsAgain(Mode mode) {
			IdempotencyEngine engine = engine(mode);
			RecordId id = newId();
			StoredResponse unavailable = response(503, "{\"busy\":true}");
			assertThat(engine.succeeded(proceeds(begin(engine, id, "fp-a")), unavailable))
				.isEqualTo(new Answer.Own(unavailable));
			assertThat(store().find(id)).isEmpty();
			engine.succeeded(proceeds(begin(engine, id, "fp-a")), response(201, "{\"done\":true}"));
			assertThat(replayed(begin(engine, id, "fp-a"))).isEqualTo(response(201, "{\"done\":true}"));
			assertThat(counted(IdempotencyOutcome.EXECUTED)).isEqualTo(2);
		}

		@ParameterizedTest
		@EnumSource(Mode.class)
		void aRefusalIsReplayedInLeaseModeButOnlySuccessesAreRecordedAfterSuccess(Mode mode) {
			IdempotencyEngine engine = engine(mode);
			RecordId id = newId();
			StoredResponse conflict = response(409, "{\"error\":\"exists\"}");
			assertThat(engine.succeeded(proceeds(begin(engine, id, "fp-a")), conflict))
				.isEqualTo(new Answer.Own(conflict));
			if (mode == Mode.LEASE) {
				assertThat(replayed(begin(engine, id, "fp-a"))).isEqualTo(conflict);
				return;
			}
			assertThat(store().find(id)).as("a refusal is not recorded").isEmpty();
			// Attempts of one request run at once: those refused (or failed) because the
			// other's effect is there answer with its success once that is recorded.
			Reservation succeeding = proceeds(begin(engine, id, "fp-a"));
			Reservation refused = proceeds(begin(engine, id, "fp-a"));
			Reservation failing = proceeds(begin(engine, id, "fp-a"));
			StoredResponse created = response(201, "{\"created\":true}");
			assertThat(engine.succeeded(succeeding, created)).isEqualTo(new Answer.Own(created));
			assertThat(engine.succeeded(refused, conflict)).isEqualTo(new Answer.Recorded(created));
			assertThat(engine.succeeded(failing, response(500, "{\"error\":\"constraint\"}")))
				.isEqualTo(new Answer.Recorded(created));
			assertThat(replayed(begin(engine, id, "fp-a"))).isEqualTo(created);
			assertThat(counted(ExecutionResult.ANSWERED_RECORDED)).isEqualTo(2);
		}

		@ParameterizedTest
		@EnumSource(Mode.class)
		void aStoreThatFailsBeforeTheCallIsAnswered503FailClosedOrRunsUnprotectedFailOpen(Mode mode) {
			RecordId id = newId();
			this.failing.failing = true;
			IdempotencyError error = rejected(begin(engine(mode), id, "fp-a"));
			assertThat(error.type()).isEqualTo(IdempotencyErrorType.STORE_UNAVAILABLE);
			assertThat(error.status()).isEqualTo(503);
			Decision open = begin(engine(mode, FailureMode.FAIL_OPEN, Duration.ZERO), id, "fp-a");
			assertThat(open).isEqualTo(new Decision.Proceed(null));
			this.failing.failing = false;
			assertThat(store().find(id)).isEmpty();
			assertThat(counted(IdempotencyOutcome.STORE_ERROR)).isOne();
			assertThat(counted(IdempotencyOutcome.FAIL_OPEN)).isOne();
		}

		@ParameterizedTest
		@EnumSource(Mode.class)
		void aStoreThatFailsAfterTheCallAnswersItsOwnResponseAndStoresNothing(Mode mode) {
			IdempotencyEngine engine = engine(mode);
			RecordId id = newId();
			Reservation reservation = proceeds(begin(engine, id, "fp-a"));
			this.failing.failing = true;
			StoredResponse created = response(201, "{\"id\":1}");
			assertThat(engine.succeeded(reservation, created)).isEqualTo(new Answer.Own(created));
			this.failing.failing = false;
			assertThat(counted(ExecutionResult.STORE_ERROR)).isOne();
			Decision retry = begin(engine, id, "fp-a");
			if (mode == Mode.LEASE) {
				// The reservation stays until its lease runs out: the retry is in flight.
				assertThat(rejected(retry).type()).isEqualTo(IdempotencyErrorType.REQUEST_IN_FLIGHT);
			}
			else {
				// Nothing was written while it ran, and nothing after: the retry runs.
				assertThat(store().find(id)).isEmpty();
				proceeds(retry);
			}
		}

		@ParameterizedTest
		@EnumSource(value = Mode.class, names = "LEASE")
		void leaseModeRunsOneKeySentByManyThreadsAtOnceExactlyOnce(Mode mode) throws Exception {
			RecordId id = newId();
			List<StoredResponse> answers = sendAtOnce(engine(mode, FailureMode.FAIL_CLOSED, Duration.ofSeconds(20)),
					id);
			StoredResponse recorded = store().find(id).orElseThrow().response();
			assertThat(answers).hasSize(THREADS).containsOnly(recorded);
			assertThat(counted(IdempotencyOutcome.EXECUTED)).isOne();
			assertThat(counted(IdempotencyOutcome.REPLAYED)).isEqualTo(THREADS - 1);
			assertThat(counted(ExecutionResult.COMPLETED)).isOne();
		}

		@ParameterizedTest
		@EnumSource(value = Mode.class, names = "RECORD_AFTER_SUCCESS")
		void recordAfterSuccessMayRunOneKeySentByManyThreadsAtOnceSeveralTimesButAnswersAllWithTheOneRecordedAnswer(
				Mode mode) throws Exception {
			RecordId id = newId();
			List<StoredResponse> answers = sendAtOnce(engine(mode, FailureMode.FAIL_CLOSED, Duration.ofSeconds(20)),
					id);
			StoredResponse recorded = store().find(id).orElseThrow().response();
			assertThat(answers).hasSize(THREADS).containsOnly(recorded);
			int executions = counted(IdempotencyOutcome.EXECUTED);
			assertThat(executions).isBetween(1, THREADS);
			assertThat(counted(IdempotencyOutcome.REPLAYED)).isEqualTo(THREADS - executions);
			assertThat(counted(ExecutionResult.COMPLETED)).as("one recording wins").isOne();
			assertThat(counted(ExecutionResult.ANSWERED_RECORDED)).as("the others answer what it recorded")
				.isEqualTo(executions - 1);
		}

		private static final int THREADS = 12;

		/**
		 * Sends one request with the key from {@link #THREADS} threads released at once;
		 * each run answers with a body of its own, after a short while so that runs
		 * overlap. Returns what each thread was answered.
		 */
		private List<StoredResponse> sendAtOnce(IdempotencyEngine engine, RecordId id) throws Exception {
			CyclicBarrier start = new CyclicBarrier(THREADS);
			ExecutorService pool = Executors.newFixedThreadPool(THREADS);
			try {
				List<Future<StoredResponse>> futures = new ArrayList<>();
				for (int i = 0; i < THREADS; i++) {
					int thread = i;
					futures.add(pool.submit(() -> {
						start.await(10, TimeUnit.SECONDS);
						Decision decision = begin(engine, id, "fp-race");
						if (decision instanceof Decision.Replay replay) {
							return replay.response();
						}
						Reservation reservation = proceeds(decision);
						Thread.sleep(50);
						return engine.succeeded(reservation, response(201, "{\"run\":" + thread + "}")).response();
					}));
				}
				List<StoredResponse> answers = new ArrayList<>();
				for (Future<StoredResponse> future : futures) {
					answers.add(future.get(60, TimeUnit.SECONDS));
				}
				return answers;
			}
			finally {
				pool.shutdownNow();
			}
		}

		/** The outer store, made to fail on demand. */
		private final class FailingStore implements IdempotencyStore {

			private volatile boolean failing;

			private IdempotencyStore store() {
				if (this.failing) {
					throw new IdempotencyStoreException("the store is cut (test)");
				}
				return IdempotencyStoreContractTests.this.store;
			}

			@Override
			public ReserveResult reserve(ReserveRequest request) {
				return store().reserve(request);
			}

			@Override
			public boolean complete(RecordId id, String ownerToken, StoredResponse response) {
				return store().complete(id, ownerToken, response);
			}

			@Override
			public boolean release(RecordId id, String ownerToken) {
				return store().release(id, ownerToken);
			}

			@Override
			public boolean heartbeat(RecordId id, String ownerToken, Duration lease) {
				return store().heartbeat(id, ownerToken, lease);
			}

			@Override
			public Optional<IdempotencyRecord> recordCompleted(CompletedRecordRequest request) {
				return store().recordCompleted(request);
			}

			@Override
			public Optional<IdempotencyRecord> find(RecordId id) {
				return store().find(id);
			}

			@Override
			public int purgeExpired(int maxRecords) {
				return store().purgeExpired(maxRecords);
			}

			@Override
			public String name() {
				return IdempotencyStoreContractTests.this.store.name();
			}

		}

	}

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
		this.store.reserve(request(id, "fp-a", token(), SHORT_LEASE));
		assertThat(existing(this.store.reserve(request(id, "fp-a", token(), SHORT_LEASE))).state())
			.isEqualTo(RecordState.IN_PROGRESS);
		elapse(SHORT_LEASE);
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

	// Record-after-success mode: recordCompleted creates a completed record only where no
	// live record is.

	protected static CompletedRecordRequest completed(RecordId id, String fingerprint, StoredResponse response,
			Duration retention) {
		return new CompletedRecordRequest(id, fingerprint, "contract-op", response, retention);
	}

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

	@Test
	void theStoreHasAName() {
		assertThat(this.store.name()).isNotBlank();
	}

}
