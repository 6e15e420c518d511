package dev.idempotency.core.internal;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Stream;

import dev.idempotency.core.ExecutionResult;
import dev.idempotency.core.IdempotencyError;
import dev.idempotency.core.IdempotencyListener;
import dev.idempotency.core.IdempotencyOutcome;
import dev.idempotency.core.IdempotencySettings;
import dev.idempotency.core.IdempotencySettings.FailureMode;
import dev.idempotency.core.IdempotencySettings.Mode;
import dev.idempotency.core.KeyFormat;
import dev.idempotency.store.CompletedRecordRequest;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.IdempotencyStoreException;
import dev.idempotency.store.IdempotencyStoreFullException;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.RecordState;
import dev.idempotency.store.ReserveRequest;
import dev.idempotency.store.ReserveResult;
import dev.idempotency.store.StoredResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The protocol's branches in both models, each against a store scripted call by call, so
 * that replays, refusals, store failures, takeovers and every way a run ends are reached
 * without a real store and without waiting. Each case checks what a front door and its
 * user see: the decision, the answer, and the one outcome and result reported.
 */
class IdempotencyEngineProtocolTests {

	private static final Instant NOW = Instant.parse("2026-12-03T12:00:00Z");

	private static final RecordId ID = new RecordId("scope", "key-1");

	/** The fingerprint of the calls under test. */
	private static final String FP = "fp";

	/** The fingerprint the same request had under an earlier fingerprint format. */
	private static final String EARLIER_FP = "fp-v1";

	private final List<IdempotencyEngine> engines = new ArrayList<>();

	private final List<IdempotencyOutcome> outcomes = new ArrayList<>();

	private final List<ExecutionResult> results = new ArrayList<>();

	@AfterEach
	void closeEngines() {
		this.engines.forEach(IdempotencyEngine::close);
	}

	static Stream<BeginCase> beginCases() {
		return Stream.of(
				// Lease mode: one reserve decides.
				new BeginCase("lease: a new key runs", Mode.LEASE, FailureMode.FAIL_CLOSED,
						(store) -> store.reserve(acquired(false)), "proceed", IdempotencyOutcome.EXECUTED),
				new BeginCase("lease: an owner whose lease expired is taken over", Mode.LEASE, FailureMode.FAIL_CLOSED,
						(store) -> store.reserve(acquired(true)), "proceed", IdempotencyOutcome.TAKEN_OVER),
				new BeginCase("lease: the same request completed is replayed", Mode.LEASE, FailureMode.FAIL_CLOSED,
						(store) -> store.reserve(existing(completed(FP, 201))), "replay 201",
						IdempotencyOutcome.REPLAYED),
				new BeginCase("lease: a record of an earlier fingerprint format replays", Mode.LEASE,
						FailureMode.FAIL_CLOSED, (store) -> store.reserve(existing(completed(EARLIER_FP, 201))),
						"replay 201", IdempotencyOutcome.REPLAYED),
				new BeginCase("lease: another request's completed record is 422", Mode.LEASE, FailureMode.FAIL_CLOSED,
						(store) -> store.reserve(existing(completed("other", 201))), "reject 422 key-reused",
						IdempotencyOutcome.MISMATCH),
				new BeginCase("lease: another request in progress is 422", Mode.LEASE, FailureMode.FAIL_CLOSED,
						(store) -> store.reserve(existing(inProgress("other"))), "reject 422 key-reused",
						IdempotencyOutcome.MISMATCH),
				new BeginCase("lease: the same request in progress after the wait is 409", Mode.LEASE,
						FailureMode.FAIL_CLOSED, (store) -> store.reserve(existing(inProgress(FP))),
						"reject 409 request-in-flight retry-after PT1S", IdempotencyOutcome.IN_FLIGHT),
				new BeginCase("lease: in progress, then completed while waiting, is replayed", Mode.LEASE,
						FailureMode.FAIL_CLOSED,
						(store) -> store.waits()
							.reserve(existing(inProgress(FP)))
							.reserve(existing(completed(FP, 201))),
						"replay 201", IdempotencyOutcome.REPLAYED),
				new BeginCase("lease: in progress, then released while waiting, runs", Mode.LEASE,
						FailureMode.FAIL_CLOSED,
						(store) -> store.waits().reserve(existing(inProgress(FP))).reserve(acquired(false)), "proceed",
						IdempotencyOutcome.EXECUTED),
				new BeginCase("lease: the store failing, fail-closed, is 503", Mode.LEASE, FailureMode.FAIL_CLOSED,
						(store) -> store.reserve(fails()), "reject 503 store-unavailable retry-after PT5S",
						IdempotencyOutcome.STORE_ERROR),
				new BeginCase("lease: a full store, fail-closed, is 503 with its own wait", Mode.LEASE,
						FailureMode.FAIL_CLOSED, (store) -> store.reserve(full(Duration.ofMillis(2500))),
						"reject 503 store-unavailable retry-after PT3S", IdempotencyOutcome.STORE_ERROR),
				new BeginCase("lease: the store failing, fail-open, runs unprotected", Mode.LEASE,
						FailureMode.FAIL_OPEN, (store) -> store.reserve(fails()), "proceed unprotected",
						IdempotencyOutcome.FAIL_OPEN),
				// Record-after-success: one read decides, nothing is written.
				new BeginCase("record-after-success: no record runs", Mode.RECORD_AFTER_SUCCESS,
						FailureMode.FAIL_CLOSED, (store) -> store.find(none()), "proceed", IdempotencyOutcome.EXECUTED),
				new BeginCase("record-after-success: the same request completed is replayed", Mode.RECORD_AFTER_SUCCESS,
						FailureMode.FAIL_CLOSED, (store) -> store.find(found(completed(FP, 201))), "replay 201",
						IdempotencyOutcome.REPLAYED),
				new BeginCase("record-after-success: a record of an earlier fingerprint format replays",
						Mode.RECORD_AFTER_SUCCESS, FailureMode.FAIL_CLOSED,
						(store) -> store.find(found(completed(EARLIER_FP, 201))), "replay 201",
						IdempotencyOutcome.REPLAYED),
				new BeginCase("record-after-success: another request's record is 422", Mode.RECORD_AFTER_SUCCESS,
						FailureMode.FAIL_CLOSED, (store) -> store.find(found(completed("other", 201))),
						"reject 422 key-reused", IdempotencyOutcome.MISMATCH),
				new BeginCase("record-after-success: a lease-mode reservation after the wait is 409",
						Mode.RECORD_AFTER_SUCCESS, FailureMode.FAIL_CLOSED,
						(store) -> store.find(found(inProgress(FP))), "reject 409 request-in-flight retry-after PT1S",
						IdempotencyOutcome.IN_FLIGHT),
				new BeginCase("record-after-success: a lease-mode reservation that completes while waiting is replayed",
						Mode.RECORD_AFTER_SUCCESS, FailureMode.FAIL_CLOSED,
						(store) -> store.waits().find(found(inProgress(FP))).find(found(completed(FP, 200))),
						"replay 200", IdempotencyOutcome.REPLAYED),
				new BeginCase("record-after-success: the store failing, fail-closed, is 503", Mode.RECORD_AFTER_SUCCESS,
						FailureMode.FAIL_CLOSED, (store) -> store.find(fails()),
						"reject 503 store-unavailable retry-after PT5S", IdempotencyOutcome.STORE_ERROR),
				new BeginCase("record-after-success: the store failing, fail-open, runs unprotected",
						Mode.RECORD_AFTER_SUCCESS, FailureMode.FAIL_OPEN, (store) -> store.find(fails()),
						"proceed unprotected", IdempotencyOutcome.FAIL_OPEN));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("beginCases")
	void begin(BeginCase c) {
		ScriptedStore store = new ScriptedStore();
		c.script().accept(store);
		IdempotencyEngine engine = engine(store, settings(c.mode(), c.failureMode(), store.waits));
		Decision decision = engine.begin(call());
		assertThat(describe(decision)).isEqualTo(c.decision());
		assertThat(this.outcomes).containsExactly(c.outcome());
		assertThat(this.results).isEmpty();
		assertThat(store.unused()).as("scripted answers never asked for").isZero();
		if (decision instanceof Decision.Proceed proceed && proceed.reservation() instanceof Reservation.Lease) {
			// The engine stops while the run goes on (the application shuts down): the
			// lease is released, not left to run out.
			store.release(() -> true);
			engine.close();
			assertThat(this.results).containsExactly(ExecutionResult.RELEASED);
			assertThat(store.unused()).isZero();
		}
	}

	/**
	 * The same cases through the engine's non-blocking path, as the reactive door takes
	 * it: the same decisions and outcomes, and every call of this blocking store on the
	 * executor given for it, none on the caller's thread.
	 */
	@ParameterizedTest(name = "{0}")
	@MethodSource("beginCases")
	void beginWithoutBlocking(BeginCase c) throws Exception {
		ScriptedStore store = new ScriptedStore();
		c.script().accept(store);
		IdempotencyEngine engine = engine(store, settings(c.mode(), c.failureMode(), store.waits));
		ExecutorService executor = Executors.newSingleThreadExecutor((task) -> new Thread(task, "store-executor"));
		try {
			Decision decision = engine.beginAsync(call(), false, executor).get(10, TimeUnit.SECONDS);
			assertThat(describe(decision)).isEqualTo(c.decision());
			assertThat(this.outcomes).containsExactly(c.outcome());
			assertThat(store.unused()).as("scripted answers never asked for").isZero();
			assertThat(store.threads).as("threads the store was called on").containsOnly("store-executor");
			if (decision instanceof Decision.Proceed proceed && proceed.reservation() instanceof Reservation.Lease) {
				store.release(() -> true);
			}
		}
		finally {
			executor.shutdownNow();
		}
	}

	@Test
	void aFullExecutorForTheStoreIsAStoreFailure() {
		ScriptedStore store = new ScriptedStore();
		IdempotencyEngine engine = engine(store, settings(Mode.LEASE, FailureMode.FAIL_CLOSED, false));
		Executor full = (task) -> {
			throw new RejectedExecutionException("full");
		};
		assertThat(describe(engine.beginAsync(call(), false, full).join()))
			.isEqualTo("reject 503 store-unavailable retry-after PT5S");
		assertThat(this.outcomes).containsExactly(IdempotencyOutcome.STORE_ERROR);
	}

	static Stream<FinishCase> succeededCases() {
		return Stream.of(
				// Lease mode: a final answer is completed, any other releases the key.
				new FinishCase("lease: a success is stored", Mode.LEASE,
						(store) -> store.reserve(acquired(false)).complete(() -> true), 201, "own 201",
						ExecutionResult.COMPLETED),
				new FinishCase("lease: a final refusal is stored", Mode.LEASE,
						(store) -> store.reserve(acquired(false)).complete(() -> true), 409, "own 409",
						ExecutionResult.COMPLETED),
				new FinishCase("lease: a success after a takeover elsewhere changes nothing", Mode.LEASE,
						(store) -> store.reserve(acquired(false)).complete(() -> false), 201, "own 201",
						ExecutionResult.OWNERSHIP_LOST),
				new FinishCase("lease: a success the store fails to keep is answered", Mode.LEASE,
						(store) -> store.reserve(acquired(false)).complete(fails()), 201, "own 201",
						ExecutionResult.STORE_ERROR),
				new FinishCase("lease: a status that is not final releases the key", Mode.LEASE,
						(store) -> store.reserve(acquired(false)).release(() -> true), 429, "own 429",
						ExecutionResult.RELEASED),
				new FinishCase("lease: a 5xx releases the key", Mode.LEASE,
						(store) -> store.reserve(acquired(false)).release(() -> true), 500, "own 500",
						ExecutionResult.RELEASED),
				new FinishCase("lease: a release after a takeover elsewhere changes nothing", Mode.LEASE,
						(store) -> store.reserve(acquired(false)).release(() -> false), 429, "own 429",
						ExecutionResult.OWNERSHIP_LOST),
				new FinishCase("lease: a release the store fails is left to the lease", Mode.LEASE,
						(store) -> store.reserve(acquired(false)).release(fails()), 429, "own 429",
						ExecutionResult.STORE_ERROR),
				new FinishCase("lease: a body too large to store releases the key", Mode.LEASE,
						(store) -> store.reserve(acquired(false)).release(() -> true), 201, 9, "own 201",
						ExecutionResult.BODY_TOO_LARGE),
				// Record-after-success: only a success is recorded; who recorded first
				// decides the answer.
				new FinishCase("record-after-success: a success is recorded", Mode.RECORD_AFTER_SUCCESS,
						(store) -> store.find(none()).recordCompleted(none()), 201, "own 201",
						ExecutionResult.COMPLETED),
				new FinishCase("record-after-success: a success recorded first by another attempt answers that one",
						Mode.RECORD_AFTER_SUCCESS,
						(store) -> store.find(none()).recordCompleted(found(completed(FP, 200))), 201, "recorded 200",
						ExecutionResult.ANSWERED_RECORDED),
				new FinishCase("record-after-success: another request's record under the key is not overwritten",
						Mode.RECORD_AFTER_SUCCESS,
						(store) -> store.find(none()).recordCompleted(found(completed("other", 200))), 201, "own 201",
						ExecutionResult.NOT_RECORDED),
				new FinishCase("record-after-success: a lease-mode reservation under the key is not overwritten",
						Mode.RECORD_AFTER_SUCCESS, (store) -> store.find(none()).recordCompleted(found(inProgress(FP))),
						201, "own 201", ExecutionResult.NOT_RECORDED),
				new FinishCase("record-after-success: a success the store fails to record is answered",
						Mode.RECORD_AFTER_SUCCESS, (store) -> store.find(none()).recordCompleted(fails()), 201,
						"own 201", ExecutionResult.STORE_ERROR),
				new FinishCase("record-after-success: a refusal is not recorded", Mode.RECORD_AFTER_SUCCESS,
						(store) -> store.find(none()).find(none()), 409, "own 409", ExecutionResult.RELEASED),
				new FinishCase("record-after-success: a refusal after another attempt's success answers that success",
						Mode.RECORD_AFTER_SUCCESS, (store) -> store.find(none()).find(found(completed(FP, 201))), 409,
						"recorded 201", ExecutionResult.ANSWERED_RECORDED),
				new FinishCase("record-after-success: a 5xx after another attempt's success answers that success",
						Mode.RECORD_AFTER_SUCCESS, (store) -> store.find(none()).find(found(completed(FP, 201))), 500,
						"recorded 201", ExecutionResult.ANSWERED_RECORDED),
				new FinishCase("record-after-success: a refusal beside another request's record is its own",
						Mode.RECORD_AFTER_SUCCESS, (store) -> store.find(none()).find(found(completed("other", 201))),
						409, "own 409", ExecutionResult.RELEASED),
				new FinishCase("record-after-success: a refusal when the store cannot say is its own",
						Mode.RECORD_AFTER_SUCCESS, (store) -> store.find(none()).find(fails()), 500, "own 500",
						ExecutionResult.RELEASED),
				new FinishCase("record-after-success: a body too large to store is not recorded",
						Mode.RECORD_AFTER_SUCCESS, (store) -> store.find(none()), 201, 9, "own 201",
						ExecutionResult.BODY_TOO_LARGE));
	}

	/** Each finishing case, finished blocking and without blocking. */
	static Stream<Arguments> succeededCasesBothWays() {
		return bothWays(succeededCases());
	}

	@ParameterizedTest(name = "{1}: {0}")
	@MethodSource("succeededCasesBothWays")
	void succeeded(FinishCase c, Finish finish) throws Exception {
		ScriptedStore store = new ScriptedStore();
		c.script().accept(store);
		IdempotencyEngine engine = engine(store, settings(c.mode(), FailureMode.FAIL_CLOSED, false));
		Reservation reservation = proceeds(engine.begin(call()));
		store.threads.clear();
		assertThat(finish.answer(engine, reservation, response(c.status(), c.bodyBytes()))).isEqualTo(c.answer());
		assertThat(this.results).containsExactly(c.result());
		assertThat(store.unused()).as("scripted answers never asked for").isZero();
		assertThat(store.threads).as("threads the store was called on").isSubsetOf(finish.storeThread());
		// Finished once: a second end changes nothing and reports nothing.
		finish.failed(engine, reservation);
		assertThat(this.results).containsExactly(c.result());
	}

	static Stream<EndCase> otherEndCases() {
		return Stream.of(new EndCase("lease: a failed run releases the key", Mode.LEASE,
				(store) -> store.reserve(acquired(false)).release(() -> true), End.FAILED, ExecutionResult.RELEASED),
				new EndCase("lease: a failed run taken over elsewhere changes nothing", Mode.LEASE,
						(store) -> store.reserve(acquired(false)).release(() -> false), End.FAILED,
						ExecutionResult.OWNERSHIP_LOST),
				new EndCase("lease: a failed run whose release fails is left to the lease", Mode.LEASE,
						(store) -> store.reserve(acquired(false)).release(fails()), End.FAILED,
						ExecutionResult.STORE_ERROR),
				new EndCase("lease: an answer too large releases the key", Mode.LEASE,
						(store) -> store.reserve(acquired(false)).release(() -> true), End.TOO_LARGE,
						ExecutionResult.BODY_TOO_LARGE),
				new EndCase("lease: an abandoned run is left to its lease", Mode.LEASE,
						(store) -> store.reserve(acquired(false)), End.ABANDONED, ExecutionResult.ABANDONED),
				new EndCase("record-after-success: a failed run writes nothing", Mode.RECORD_AFTER_SUCCESS,
						(store) -> store.find(none()), End.FAILED, ExecutionResult.RELEASED),
				new EndCase("record-after-success: an answer too large writes nothing", Mode.RECORD_AFTER_SUCCESS,
						(store) -> store.find(none()), End.TOO_LARGE, ExecutionResult.BODY_TOO_LARGE),
				new EndCase("record-after-success: an abandoned run writes nothing", Mode.RECORD_AFTER_SUCCESS,
						(store) -> store.find(none()), End.ABANDONED, ExecutionResult.ABANDONED));
	}

	static Stream<Arguments> otherEndCasesBothWays() {
		return bothWays(otherEndCases());
	}

	@ParameterizedTest(name = "{1}: {0}")
	@MethodSource("otherEndCasesBothWays")
	void otherEnds(EndCase c, Finish finish) throws Exception {
		ScriptedStore store = new ScriptedStore();
		c.script().accept(store);
		IdempotencyEngine engine = engine(store, settings(c.mode(), FailureMode.FAIL_CLOSED, false));
		Reservation reservation = proceeds(engine.begin(call()));
		store.threads.clear();
		switch (c.end()) {
			case FAILED -> finish.failed(engine, reservation);
			case TOO_LARGE -> finish.responseTooLarge(engine, reservation, 2_000_000);
			// Calls no store: one method for both ways.
			case ABANDONED -> engine.abandoned(reservation, "the asynchronous request timed out");
		}
		assertThat(this.results).containsExactly(c.result());
		assertThat(store.unused()).as("scripted answers never asked for").isZero();
		assertThat(store.threads).as("threads the store was called on").isSubsetOf(finish.storeThread());
		// Finished once: a late success changes nothing and reports nothing.
		assertThat(finish.answer(engine, reservation, response(201, 1))).isEqualTo("own 201");
		assertThat(this.results).containsExactly(c.result());
	}

	@Test
	void aFullExecutorForTheStoreWhenFinishingIsAStoreFailure() {
		ScriptedStore store = new ScriptedStore().reserve(acquired(false));
		IdempotencyEngine engine = engine(store, settings(Mode.LEASE, FailureMode.FAIL_CLOSED, false));
		Reservation reservation = proceeds(engine.begin(call()));
		Executor full = (task) -> {
			throw new RejectedExecutionException("full");
		};
		assertThat(describe(engine.succeededAsync(reservation, response(201, 1), full).join())).isEqualTo("own 201");
		assertThat(this.results).containsExactly(ExecutionResult.STORE_ERROR);
	}

	/** The cases, each to be finished both ways. */
	private static Stream<Arguments> bothWays(Stream<?> cases) {
		return cases.flatMap((c) -> Stream.of(Finish.values()).map((finish) -> Arguments.of(c, finish)));
	}

	static Stream<AtomicCase> atomicCases() {
		return Stream.of(
				new AtomicCase("lease: completed in the transaction, committed", Mode.LEASE,
						(store) -> store.reserve(acquired(false)).complete(() -> true), true, "commit",
						ExecutionResult.COMPLETED),
				new AtomicCase("lease: completed in the transaction, the commit failed: released", Mode.LEASE,
						(store) -> store.reserve(acquired(false)).complete(() -> true).release(() -> true), false,
						"commit", ExecutionResult.STORE_ERROR),
				new AtomicCase("lease: taken over elsewhere: rolled back, in flight, not released", Mode.LEASE,
						(store) -> store.reserve(acquired(false)).complete(() -> false), false,
						"refuse 409 request-in-flight", ExecutionResult.OWNERSHIP_LOST),
				new AtomicCase("lease: the store failing: rolled back, 503, released", Mode.LEASE,
						(store) -> store.reserve(acquired(false)).complete(fails()).release(() -> true), false,
						"refuse 503 store-unavailable", ExecutionResult.STORE_ERROR),
				new AtomicCase("record-after-success: recorded in the transaction, committed",
						Mode.RECORD_AFTER_SUCCESS, (store) -> store.find(none()).recordCompleted(none()), true,
						"commit", ExecutionResult.COMPLETED),
				new AtomicCase("record-after-success: recorded in the transaction, the commit failed",
						Mode.RECORD_AFTER_SUCCESS, (store) -> store.find(none()).recordCompleted(none()), false,
						"commit", ExecutionResult.STORE_ERROR),
				new AtomicCase("record-after-success: another attempt recorded first: rolled back, replayed",
						Mode.RECORD_AFTER_SUCCESS,
						(store) -> store.find(none()).recordCompleted(found(completed(FP, 200))), false, "replay 200",
						ExecutionResult.ANSWERED_RECORDED),
				new AtomicCase("record-after-success: another request recorded: rolled back, 422",
						Mode.RECORD_AFTER_SUCCESS,
						(store) -> store.find(none()).recordCompleted(found(completed("other", 200))), false,
						"refuse 422 key-reused", ExecutionResult.NOT_RECORDED),
				new AtomicCase("record-after-success: a lease-mode reservation: rolled back, in flight",
						Mode.RECORD_AFTER_SUCCESS, (store) -> store.find(none()).recordCompleted(found(inProgress(FP))),
						false, "refuse 409 request-in-flight", ExecutionResult.NOT_RECORDED),
				new AtomicCase("record-after-success: the store failing: rolled back, 503", Mode.RECORD_AFTER_SUCCESS,
						(store) -> store.find(none()).recordCompleted(fails()), false, "refuse 503 store-unavailable",
						ExecutionResult.STORE_ERROR));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("atomicCases")
	void atomicCompletion(AtomicCase c) {
		ScriptedStore store = new ScriptedStore();
		c.script().accept(store);
		IdempotencyEngine engine = engine(store, settings(c.mode(), FailureMode.FAIL_CLOSED, false));
		Reservation reservation = proceeds(engine.begin(call()));
		AtomicOutcome outcome = engine.succeededInTransaction(reservation, response(201, 1));
		assertThat(describe(outcome)).isEqualTo(c.outcome());
		assertThat(this.results).as("nothing reported before the transaction ended").isEmpty();
		engine.transactionEnded(reservation, outcome, c.committed());
		assertThat(this.results).containsExactly(c.result());
		assertThat(store.unused()).as("scripted answers never asked for").isZero();
	}

	@Test
	void eachModelRecordsItsOwnAnswers() {
		IdempotencyEngine lease = engine(new ScriptedStore(), settings(Mode.LEASE, FailureMode.FAIL_CLOSED, false));
		IdempotencyEngine recordAfterSuccess = engine(new ScriptedStore(),
				settings(Mode.RECORD_AFTER_SUCCESS, FailureMode.FAIL_CLOSED, false));
		assertThat(List.of(200, 201, 400, 409, 422, 429, 500).stream().filter(lease::records).toList())
			.containsExactly(200, 201, 400, 409, 422);
		assertThat(List.of(200, 201, 400, 409, 422, 429, 500).stream().filter(recordAfterSuccess::records).toList())
			.containsExactly(200, 201);
	}

	@Test
	void anAnswerThatIsNotRecordedHasNoAtomicCompletion() {
		ScriptedStore store = new ScriptedStore().find(none());
		IdempotencyEngine engine = engine(store, settings(Mode.RECORD_AFTER_SUCCESS, FailureMode.FAIL_CLOSED, false));
		Reservation reservation = proceeds(engine.begin(call()));
		assertThatIllegalArgumentException()
			.isThrownBy(() -> engine.succeededInTransaction(reservation, response(409, 1)));
		assertThatIllegalArgumentException()
			.isThrownBy(() -> engine.succeededInTransaction(reservation, response(201, 9)));
	}

	@Test
	void aStoppedEngineRefusesKeyedCallsInLeaseModeOnly() {
		IdempotencyEngine lease = engine(new ScriptedStore(), settings(Mode.LEASE, FailureMode.FAIL_OPEN, false));
		lease.stop();
		assertThat(describe(lease.begin(call()))).isEqualTo("reject 503 store-unavailable retry-after PT5S");
		IdempotencyEngine recordAfterSuccess = engine(new ScriptedStore().find(none()),
				settings(Mode.RECORD_AFTER_SUCCESS, FailureMode.FAIL_CLOSED, false));
		recordAfterSuccess.stop();
		assertThat(describe(recordAfterSuccess.begin(call()))).isEqualTo("proceed");
		assertThat(this.outcomes).containsExactly(IdempotencyOutcome.STORE_ERROR, IdempotencyOutcome.EXECUTED);
	}

	@Test
	void keyProblemsAreAnsweredWithoutTheStore() {
		IdempotencyEngine engine = engine(new ScriptedStore(), settings(Mode.LEASE, FailureMode.FAIL_CLOSED, false));
		assertThat(describe(engine.begin(call(List.of(), false)))).isEqualTo("proceed unprotected");
		assertThat(describe(engine.begin(call(List.of(), true)))).isEqualTo("reject 400 key-required");
		assertThat(describe(engine.begin(call(List.of("a", "b"), false)))).isEqualTo("reject 400 invalid-key");
		assertThat(describe(engine
			.begin(new IdempotentCall("scope", List.of("not-a-uuid"), KeyFormat.UUID, false, "op", () -> FP))))
			.isEqualTo("reject 400 invalid-key");
		assertThat(this.outcomes).containsExactly(IdempotencyOutcome.UNPROTECTED, IdempotencyOutcome.INVALID_KEY,
				IdempotencyOutcome.INVALID_KEY, IdempotencyOutcome.INVALID_KEY);
	}

	// What a front door sees

	private static String describe(Decision decision) {
		if (decision instanceof Decision.Proceed proceed) {
			return (proceed.reservation() != null) ? "proceed" : "proceed unprotected";
		}
		if (decision instanceof Decision.Replay replay) {
			return "replay " + replay.response().status();
		}
		IdempotencyError error = ((Decision.Reject) decision).error();
		return "reject " + describe(error) + ((error.retryAfter() != null) ? " retry-after " + error.retryAfter() : "");
	}

	private static String describe(IdempotencyError error) {
		return error.status() + " " + error.type().slug();
	}

	private static String describe(AtomicOutcome outcome) {
		if (outcome instanceof AtomicOutcome.Replay replay) {
			return "replay " + replay.response().status();
		}
		if (outcome instanceof AtomicOutcome.Refuse refuse) {
			return "refuse " + describe(refuse.error());
		}
		return outcome.commits() ? "commit" : "neither commit, nor replay, nor refusal";
	}

	/** The answer after a run succeeded: its own response, or the one recorded first. */
	private static String describe(Answer answer) {
		return ((answer instanceof Answer.Own) ? "own " : "recorded ") + answer.response().status();
	}

	private static Reservation proceeds(Decision decision) {
		assertThat(describe(decision)).isEqualTo("proceed");
		return ((Decision.Proceed) decision).reservation();
	}

	// Set-up

	private IdempotencyEngine engine(IdempotencyStore store, IdempotencySettings settings) {
		IdempotencyEngine engine = new IdempotencyEngine(store, settings, Clock.fixed(NOW, ZoneOffset.UTC),
				new IdempotencyListener() {

					@Override
					public void onOutcome(IdempotencyOutcome outcome, String operation) {
						IdempotencyEngineProtocolTests.this.outcomes.add(outcome);
					}

					@Override
					public void onExecutionFinished(ExecutionResult result, String operation) {
						IdempotencyEngineProtocolTests.this.results.add(result);
					}

				});
		this.engines.add(engine);
		return engine;
	}

	/**
	 * Settings whose heartbeat never comes within a test. A call that waits for a run in
	 * flight waits on the fixed clock, that is until the store answers otherwise, polling
	 * every millisecond; one that does not wait is refused at once.
	 */
	private static IdempotencySettings settings(Mode mode, FailureMode failureMode, boolean waits) {
		return IdempotencySettings.builder()
			.mode(mode)
			.failureMode(failureMode)
			.inFlightWait(waits ? Duration.ofMinutes(1) : Duration.ZERO)
			.inFlightPollInterval(Duration.ofMillis(1))
			.maxBodyBytes(8)
			.build();
	}

	private static IdempotentCall call() {
		return new IdempotentCall("scope", List.of(ID.key()), KeyFormat.OPAQUE, false, "op", () -> FP,
				() -> List.of(EARLIER_FP));
	}

	private static IdempotentCall call(List<String> keys, boolean required) {
		return new IdempotentCall("scope", keys, KeyFormat.OPAQUE, required, "op", () -> FP);
	}

	private static StoredResponse response(int status, int bodyBytes) {
		return new StoredResponse(status, Map.of(), new byte[bodyBytes]);
	}

	private static IdempotencyRecord completed(String fingerprint, int status) {
		return new IdempotencyRecord(ID, fingerprint, "op", RecordState.COMPLETED, null, NOW.plusSeconds(60),
				response(status, 1));
	}

	private static IdempotencyRecord inProgress(String fingerprint) {
		return new IdempotencyRecord(ID, fingerprint, "op", RecordState.IN_PROGRESS, NOW.plusSeconds(30),
				NOW.plusSeconds(60), null);
	}

	private static Supplier<ReserveResult> acquired(boolean takenOver) {
		return () -> new ReserveResult.Acquired(takenOver);
	}

	private static Supplier<ReserveResult> existing(IdempotencyRecord record) {
		return () -> new ReserveResult.Existing(record);
	}

	private static Supplier<Optional<IdempotencyRecord>> found(IdempotencyRecord record) {
		return () -> Optional.of(record);
	}

	private static Supplier<Optional<IdempotencyRecord>> none() {
		return Optional::empty;
	}

	private static <T> Supplier<T> fails() {
		return () -> {
			throw new IdempotencyStoreException("the scripted store fails");
		};
	}

	private static <T> Supplier<T> full(Duration retryAfter) {
		return () -> {
			throw new IdempotencyStoreFullException("the scripted store is full", retryAfter);
		};
	}

	record BeginCase(String name, Mode mode, FailureMode failureMode, Consumer<ScriptedStore> script, String decision,
			IdempotencyOutcome outcome) {

		@Override
		public String toString() {
			return this.name;
		}

	}

	record FinishCase(String name, Mode mode, Consumer<ScriptedStore> script, int status, int bodyBytes, String answer,
			ExecutionResult result) {

		FinishCase(String name, Mode mode, Consumer<ScriptedStore> script, int status, String answer,
				ExecutionResult result) {
			this(name, mode, script, status, 1, answer, result);
		}

		@Override
		public String toString() {
			return this.name;
		}

	}

	/**
	 * How a run is finished: blocking, as the Spring MVC door, the method door and the
	 * template do (the store called on the caller's thread), or without blocking, as the
	 * WebFlux door does (this blocking store called on the executor given for it only).
	 */
	enum Finish {

		BLOCKING {

			@Override
			String answer(IdempotencyEngine engine, Reservation reservation, StoredResponse own) {
				return describe(engine.succeeded(reservation, own));
			}

			@Override
			void failed(IdempotencyEngine engine, Reservation reservation) {
				engine.failed(reservation, "the handler threw", new IllegalStateException("the handler threw"));
			}

			@Override
			void responseTooLarge(IdempotencyEngine engine, Reservation reservation, long bytes) {
				engine.responseTooLarge(reservation, bytes);
			}

			@Override
			String storeThread() {
				return Thread.currentThread().getName();
			}

		},

		WITHOUT_BLOCKING {

			@Override
			String answer(IdempotencyEngine engine, Reservation reservation, StoredResponse own) throws Exception {
				Answer answer = onStoreExecutor((executor) -> engine.succeededAsync(reservation, own, executor));
				return describe(answer);
			}

			@Override
			void failed(IdempotencyEngine engine, Reservation reservation) throws Exception {
				onStoreExecutor((executor) -> engine.failedAsync(reservation, "the handler threw",
						new IllegalStateException("the handler threw"), executor));
			}

			@Override
			void responseTooLarge(IdempotencyEngine engine, Reservation reservation, long bytes) throws Exception {
				onStoreExecutor((executor) -> engine.responseTooLargeAsync(reservation, bytes, executor));
			}

			@Override
			String storeThread() {
				return "store-executor";
			}

			private static <T> T onStoreExecutor(Function<Executor, CompletableFuture<T>> finish) throws Exception {
				ExecutorService executor = Executors
					.newSingleThreadExecutor((task) -> new Thread(task, "store-executor"));
				try {
					return finish.apply(executor).get(10, TimeUnit.SECONDS);
				}
				finally {
					executor.shutdownNow();
				}
			}

		};

		abstract String answer(IdempotencyEngine engine, Reservation reservation, StoredResponse own) throws Exception;

		abstract void failed(IdempotencyEngine engine, Reservation reservation) throws Exception;

		abstract void responseTooLarge(IdempotencyEngine engine, Reservation reservation, long bytes) throws Exception;

		/** The one thread the store may be called on to finish a run. */
		abstract String storeThread();

	}

	enum End {

		FAILED, TOO_LARGE, ABANDONED

	}

	record EndCase(String name, Mode mode, Consumer<ScriptedStore> script, End end, ExecutionResult result) {

		@Override
		public String toString() {
			return this.name;
		}

	}

	record AtomicCase(String name, Mode mode, Consumer<ScriptedStore> script, boolean committed, String outcome,
			ExecutionResult result) {

		@Override
		public String toString() {
			return this.name;
		}

	}

	/**
	 * A store that answers each call with the next answer scripted for it, and fails the
	 * test on a call nothing was scripted for.
	 */
	static final class ScriptedStore implements IdempotencyStore {

		private final Deque<Supplier<ReserveResult>> reserves = new ArrayDeque<>();

		private final Deque<Supplier<Boolean>> completes = new ArrayDeque<>();

		private final Deque<Supplier<Boolean>> releases = new ArrayDeque<>();

		private final Deque<Supplier<Optional<IdempotencyRecord>>> finds = new ArrayDeque<>();

		private final Deque<Supplier<Optional<IdempotencyRecord>>> recordCompleteds = new ArrayDeque<>();

		/** Whether the call under test waits for a run in flight. */
		private boolean waits;

		ScriptedStore reserve(Supplier<ReserveResult> answer) {
			this.reserves.add(answer);
			return this;
		}

		ScriptedStore complete(Supplier<Boolean> answer) {
			this.completes.add(answer);
			return this;
		}

		ScriptedStore release(Supplier<Boolean> answer) {
			this.releases.add(answer);
			return this;
		}

		ScriptedStore find(Supplier<Optional<IdempotencyRecord>> answer) {
			this.finds.add(answer);
			return this;
		}

		ScriptedStore recordCompleted(Supplier<Optional<IdempotencyRecord>> answer) {
			this.recordCompleteds.add(answer);
			return this;
		}

		ScriptedStore waits() {
			this.waits = true;
			return this;
		}

		/** How many scripted answers were never asked for. */
		int unused() {
			return this.reserves.size() + this.completes.size() + this.releases.size() + this.finds.size()
					+ this.recordCompleteds.size();
		}

		private static <T> T next(Deque<Supplier<T>> answers, String call) {
			Supplier<T> answer = answers.poll();
			if (answer == null) {
				throw new AssertionError("Unexpected store call: " + call);
			}
			return answer.get();
		}

		/** The names of the threads the store was called on. */
		final Set<String> threads = ConcurrentHashMap.newKeySet();

		@Override
		public ReserveResult reserve(ReserveRequest request) {
			this.threads.add(Thread.currentThread().getName());
			assertThat(request.id()).isEqualTo(ID);
			return next(this.reserves, "reserve");
		}

		@Override
		public boolean complete(RecordId id, String ownerToken, StoredResponse response) {
			this.threads.add(Thread.currentThread().getName());
			return next(this.completes, "complete");
		}

		@Override
		public boolean release(RecordId id, String ownerToken) {
			this.threads.add(Thread.currentThread().getName());
			return next(this.releases, "release");
		}

		@Override
		public boolean heartbeat(RecordId id, String ownerToken, Duration lease) {
			throw new AssertionError("Unexpected store call: heartbeat");
		}

		@Override
		public Optional<IdempotencyRecord> recordCompleted(CompletedRecordRequest request) {
			this.threads.add(Thread.currentThread().getName());
			return next(this.recordCompleteds, "recordCompleted");
		}

		@Override
		public Optional<IdempotencyRecord> find(RecordId id) {
			this.threads.add(Thread.currentThread().getName());
			assertThat(id).isEqualTo(ID);
			return next(this.finds, "find");
		}

		@Override
		public int purgeExpired(int maxRecords) {
			throw new AssertionError("Unexpected store call: purgeExpired");
		}

		@Override
		public String name() {
			return "scripted";
		}

	}

}
