package dev.idempotency.store.contract;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
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
import dev.idempotency.core.IdempotencySettings.FailureMode;
import dev.idempotency.core.IdempotencySettings.Mode;
import dev.idempotency.core.internal.Answer;
import dev.idempotency.core.internal.Decision;
import dev.idempotency.core.internal.IdempotencyEngine;
import dev.idempotency.core.internal.Reservation;
import dev.idempotency.store.CompletedRecordRequest;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.IdempotencyStoreException;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.RecordState;
import dev.idempotency.store.ReserveRequest;
import dev.idempotency.store.ReserveResult;
import dev.idempotency.store.StoredResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The engine over the store under test, in each mode. Part of
 * {@link IdempotencyStoreContractTests}: a store's test extends that class, not this one.
 */
public abstract class EngineOverStoreContract extends StoreContractSupport {

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
			IdempotencyEngine engine = new IdempotencyEngine(this.failing, settings(mode, failureMode, inFlightWait),
					Clock.systemUTC(), new IdempotencyListener() {

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
			return EngineOverStoreContract.this.store;
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
				return EngineOverStoreContract.this.store;
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
				return EngineOverStoreContract.this.store.name();
			}

		}

	}

}
