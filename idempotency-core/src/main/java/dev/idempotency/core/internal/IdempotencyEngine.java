package dev.idempotency.core.internal;

import java.time.Clock;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

import dev.idempotency.core.ExecutionResult;
import dev.idempotency.core.IdempotencyError;
import dev.idempotency.core.IdempotencyListener;
import dev.idempotency.core.IdempotencyOutcome;
import dev.idempotency.core.IdempotencySettings;
import dev.idempotency.core.KeyFormat;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.ReserveRequest;
import dev.idempotency.store.StoredResponse;
import dev.idempotency.store.seal.Sealing;
import dev.idempotency.store.seal.SealingStore;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * The Idempotency-Key protocol, independent of HTTP and of any store: validates the key,
 * reserves the record, replays, rejects misuse, and after the operation stores or
 * releases its result, every write fenced by the owner token. While an operation runs, a
 * heartbeat thread extends its lease (see {@link #start()}). Front doors translate to and
 * from it.
 * <p>
 * In {@link IdempotencySettings.Mode#RECORD_AFTER_SUCCESS record-after-success} mode it
 * reads the record before the operation instead of reserving it, writes nothing while the
 * operation runs (no lease, no heartbeat), and records the final response afterwards with
 * one conditional insert; {@link #succeeded} then says which response to answer.
 * <p>
 * Reports to its {@link IdempotencyListener} exactly one {@link IdempotencyOutcome} per
 * call to {@link #begin}, and one {@link ExecutionResult} per run that held a
 * reservation. With an {@link ObservationRegistry}, each call with a key (or that needs
 * one) is also one {@code idempotency.request} observation, from {@link #begin} to the
 * decision, or for a call that runs, to the end of its run.
 *
 * @since 0.1.0
 */
public class IdempotencyEngine implements AutoCloseable {

	private static final Log logger = LogFactory.getLog(IdempotencyEngine.class);

	/**
	 * Statuses that are never final: the client may retry and the operation must run
	 * again.
	 */
	private static final Set<Integer> RELEASED_STATUSES = Set.of(401, 403, 408, 425, 429);

	private final IdempotencyStore store;

	private final IdempotencySettings settings;

	private final EngineReporter reporter;

	private final Refusals refusals;

	private final Heartbeat heartbeat;

	private final KeyWindow keyWindow;

	/** What the mode does its own way, chosen once. */
	private final ProtocolModel model;

	private final RequestObservations observations;

	private final Sealing sealing;

	/**
	 * An engine whose heartbeat thread starts with {@link #start()}, or with the first
	 * call to {@link #begin} if nothing started it before; {@link #stop()} (or
	 * {@link #close()}) ends it.
	 */
	public IdempotencyEngine(IdempotencyStore store, IdempotencySettings settings, Clock clock,
			IdempotencyListener listener) {
		this(store, settings, clock, listener, ObservationRegistry.NOOP, false);
	}

	/**
	 * An engine that also makes each call an {@code idempotency.request} observation in
	 * {@code observationRegistry}.
	 * @param observeKeyHash whether the observation carries the high-cardinality key
	 * {@code idempotency.key.hash} (the first 16 hex digits of the SHA-256 of the key);
	 * the key itself never
	 */
	public IdempotencyEngine(IdempotencyStore store, IdempotencySettings settings, Clock clock,
			IdempotencyListener listener, ObservationRegistry observationRegistry, boolean observeKeyHash) {
		this(store, settings, clock, listener, observationRegistry, observeKeyHash, Sealing.none());
	}

	/**
	 * An engine that also seals the answers it stores and keys the fingerprints of its
	 * records as {@code sealing} says, over any store ({@link SealingStore}).
	 * @param sealing how answers are sealed and fingerprints keyed;
	 * {@link Sealing#none()} stores them as they are, and refuses an answer found sealed
	 */
	public IdempotencyEngine(IdempotencyStore store, IdempotencySettings settings, Clock clock,
			IdempotencyListener listener, ObservationRegistry observationRegistry, boolean observeKeyHash,
			Sealing sealing) {
		this.store = new SealingStore(SealingStore.unwrap(store), sealing);
		this.sealing = sealing;
		this.settings = settings;
		this.reporter = new EngineReporter(listener);
		this.refusals = new Refusals(settings, store, this.reporter);
		this.heartbeat = new Heartbeat(this, this.reporter);
		this.keyWindow = new KeyWindow(settings, clock);
		ExistingRecords existing = new ExistingRecords(settings, clock, this.refusals, this.reporter);
		this.model = (settings.mode() == IdempotencySettings.Mode.RECORD_AFTER_SUCCESS)
				? new RecordAfterSuccessModel(this, this.reporter, this.refusals, existing)
				: new LeaseModel(this, this.heartbeat, this.reporter, this.refusals, existing);
		this.observations = new RequestObservations(observationRegistry, observeKeyHash, settings.mode(), store.name());
	}

	/**
	 * Starts the heartbeat thread: one sweep over the running reservations, four times
	 * per interval, instead of a task scheduled and cancelled per request. A sweep beats
	 * every owner whose last beat started at least 3/4 of an interval ago, so two beats
	 * of an owner start at most one interval apart (plus the duration of one sweep); the
	 * settings keep that within half the lease. Does nothing if already running; restarts
	 * a stopped engine.
	 */
	public void start() {
		this.heartbeat.start();
	}

	/**
	 * Stops the heartbeat thread and waits up to 5 seconds for it to end. From now on
	 * {@link #begin} refuses keyed calls (503 store-unavailable) until {@link #start()}
	 * again: an owner without heartbeats would be taken over after one lease.
	 * <p>
	 * A run that still holds its lease (the application stops after its web server's
	 * graceful shutdown gave up on it) is released, logged at WARN: a retry, on this node
	 * or another, runs it again at once instead of after the lease, as after a crash.
	 * What the cut run did before is not undone (under atomic completion its transaction
	 * rolls back); should it still finish, it stores nothing.
	 */
	public void stop() {
		this.heartbeat.stop();
	}

	/** Whether the heartbeat thread runs. */
	public boolean isRunning() {
		return this.heartbeat.isRunning();
	}

	public IdempotencySettings settings() {
		return this.settings;
	}

	/**
	 * The store as the engine uses it: a {@link SealingStore} over the store it was given
	 * ({@link SealingStore#unwrap} gives that one back), which seals answers on their way
	 * in and opens them on their way out.
	 */
	public IdempotencyStore store() {
		return this.store;
	}

	/** Told of every decision, run and store call of this engine. */
	public IdempotencyListener listener() {
		return this.reporter.listener();
	}

	/**
	 * Whether a result completed now, on this thread, commits or rolls back with the
	 * transaction active on it (the store joins it, see
	 * {@link IdempotencyStore#joinsCurrentTransaction()}). A front door running inside a
	 * caller's transaction that is not joined must complete only after it committed.
	 */
	public boolean joinsCurrentTransaction() {
		return this.store.joinsCurrentTransaction();
	}

	/**
	 * Whether the transaction that a completion now would join has sent nothing to the
	 * database yet ({@link IdempotencyStore#joinedTransactionIsEmpty()}).
	 */
	public boolean joinedTransactionIsEmpty() {
		return this.store.joinedTransactionIsEmpty();
	}

	/** Whether a response with this status is final, so it is stored and replayed. */
	public static boolean isFinal(int status) {
		return status >= 200 && status < 500 && !RELEASED_STATUSES.contains(status);
	}

	/**
	 * Decides what to do with a call: run it (owning its record, or unprotected), replay
	 * a stored response, or refuse it. One store round trip for a new key.
	 */
	public Decision begin(IdempotentCall call) {
		return begin(call, false);
	}

	/**
	 * Decides what to do with a call, as {@link #begin(IdempotentCall)}, and tells the
	 * store whether the run that follows completes atomically: the door records its
	 * answer with {@link #succeededInTransaction} in the transaction of the operation's
	 * own writes, on the store's database, or else releases the key. A store may then
	 * make the reservation less durable than the completion
	 * ({@link ReserveRequest#atomicCompletion()}).
	 * @param atomicCompletion whether the run completes atomically; {@code false} is
	 * always safe
	 */
	public Decision begin(IdempotentCall call, boolean atomicCompletion) {
		Observation observation = this.observations.start(call);
		if (observation == null) {
			return firstStep(call, null, atomicCompletion).decide();
		}
		Decision decision;
		try {
			decision = firstStep(call, observation, atomicCompletion).decide();
		}
		catch (RuntimeException ex) {
			// Such as a request body too large to fingerprint: nothing ran.
			RequestObservations.stop(observation, ObservedOutcome.REFUSED, ex);
			throw ex;
		}
		stopUnlessItRuns(observation, decision);
		return decision;
	}

	/**
	 * Decides what to do with a call, as {@link #begin(IdempotentCall, boolean)}, without
	 * blocking the calling thread: the store calls go through the store's non-blocking
	 * variants ({@link IdempotencyStore#reserveAsync},
	 * {@link IdempotencyStore#findAsync}; a blocking store's run on {@code executor}),
	 * and the wait for a run of the same request in flight elsewhere is a delay that
	 * holds no thread. The same decisions, outcomes and observation as {@code begin};
	 * finish a run that proceeds without blocking either, with {@link #succeededAsync},
	 * {@link #failedAsync} and {@link #responseTooLargeAsync} ({@link #abandoned} never
	 * calls the store).
	 * @param executor a bounded executor for a blocking store's calls
	 * @throws RuntimeException as {@code begin}, when the call's fingerprint cannot be
	 * computed (nothing ran)
	 */
	public CompletableFuture<Decision> beginAsync(IdempotentCall call, boolean atomicCompletion, Executor executor) {
		return beginAsync(call, atomicCompletion, executor, () -> CompletableFuture.completedFuture(null));
	}

	/**
	 * {@link #beginAsync(IdempotentCall, boolean, Executor)} for a call whose fingerprint
	 * can only be computed once {@code beforeFingerprint} has completed (a request body
	 * read without blocking): that is started only when the store is to be asked, after
	 * the key was found valid, so that a request refused without a look (no key, an
	 * invalid one) is never read. If it fails, so does the returned future (nothing ran).
	 */
	public CompletableFuture<Decision> beginAsync(IdempotentCall call, boolean atomicCompletion, Executor executor,
			Supplier<? extends CompletionStage<?>> beforeFingerprint) {
		Observation observation = this.observations.start(call);
		Step step;
		try {
			step = firstStep(call, observation, atomicCompletion);
		}
		catch (RuntimeException ex) {
			if (observation != null) {
				RequestObservations.stop(observation, ObservedOutcome.REFUSED, ex);
			}
			throw ex;
		}
		Lookup<?> lookup = step.lookup();
		CompletableFuture<Decision> decided = (lookup != null)
				? beforeFingerprint.get().toCompletableFuture().thenCompose((ready) -> lookup.decideAsync(executor))
				: CompletableFuture.completedFuture(step.decide());
		if (observation == null) {
			return decided;
		}
		return decided.whenComplete((decision, error) -> {
			if (error != null) {
				RequestObservations.stop(observation, ObservedOutcome.REFUSED, error);
			}
			else {
				stopUnlessItRuns(observation, decision);
			}
		});
	}

	/** A call that runs is observed until its run is finished. */
	private static void stopUnlessItRuns(Observation observation, Decision decision) {
		if (!(decision instanceof Decision.Proceed proceed) || proceed.reservation() == null) {
			RequestObservations.stop(observation, ObservedOutcome.of(decision));
		}
	}

	/**
	 * What decides a call: a decision known before the store is asked (no key, an invalid
	 * one, a stopped engine), or the mode's look at the key.
	 */
	private Step firstStep(IdempotentCall call, @Nullable Observation observation, boolean atomicCompletion) {
		if (call.keyValues().isEmpty()) {
			if (call.keyRequired()) {
				return Step.of(this.refusals.keyRequired(call.operation()));
			}
			this.reporter.report(IdempotencyOutcome.UNPROTECTED, call.operation(), null);
			return Step.of(new Decision.Proceed(null));
		}
		if (call.keyValues().size() > 1) {
			return Step.of(this.refusals.invalidKey(call.operation(),
					"send exactly one idempotency key, got " + call.keyValues().size()));
		}
		IdempotencyKey key;
		try {
			key = IdempotencyKey.parse(call.keyValues().get(0), call.keyFormat());
		}
		catch (InvalidIdempotencyKeyException ex) {
			return Step.of(this.refusals.invalidKey(call.operation(), ex.getMessage()));
		}
		String windowProblem = this.keyWindow.problem(key);
		if (windowProblem != null) {
			if (this.settings.keyAgePolicy() == IdempotencySettings.KeyAgePolicy.REJECT) {
				return Step.of(this.refusals.invalidKey(call.operation(), windowProblem));
			}
			logger.warn("Accepting idempotency key " + key.value() + " for " + call.operation() + ": " + windowProblem);
		}
		Decision refusal = this.model.refusal(call.operation());
		if (refusal != null) {
			return Step.of(refusal);
		}
		if (observation != null && this.observations.keyHash()) {
			RequestObservations.keyHash(observation, key.value());
		}
		RecordId id = StoredIds.of(call.scope(), key, call.door());
		return new Step(null, this.model.lookup(id, KeyedFingerprints.of(call, this.sealing),
				this.keyWindow.retentionFor(key), observation, atomicCompletion));
	}

	/** A decision known at once, or the look that decides. */
	private record Step(@Nullable Decision decision, @Nullable Lookup<?> lookup) {

		static Step of(Decision decision) {
			return new Step(decision, null);
		}

		Decision decide() {
			return (this.lookup != null) ? this.lookup.decide() : Objects.requireNonNull(this.decision);
		}

	}

	/**
	 * The operation finished with this response: stores it if it is final and fits, else
	 * releases the key so that a retry runs again.
	 * <p>
	 * In record-after-success mode it records the response if no record holds the key. If
	 * another attempt of the same request recorded its response first (both ran), the
	 * answer is that recorded response, so that every attempt and every retry gets the
	 * same one.
	 * @return the response to answer with: {@link Answer.Own} with {@code response}
	 * itself, or in record-after-success mode {@link Answer.Recorded} with the response
	 * recorded first by another attempt of the same request
	 */
	public Answer succeeded(Reservation reservation, StoredResponse response) {
		if (!finish(reservation)) {
			return new Answer.Own(response);
		}
		return this.model.succeeded(reservation, response).finish();
	}

	/**
	 * {@link #succeeded} without blocking the calling thread: the same store call through
	 * the store's non-blocking variant ({@link IdempotencyStore#completeAsync},
	 * {@link IdempotencyStore#releaseAsync},
	 * {@link IdempotencyStore#recordCompletedAsync} or
	 * {@link IdempotencyStore#findAsync}; a blocking store's on {@code executor}, a
	 * non-blocking store's on the calling thread), then the same decision, result and
	 * observation, on the thread that completes the call.
	 * @param executor a bounded executor for a blocking store's calls
	 * @return the response to answer with, as {@code succeeded} gives it; a store failure
	 * is decided as there (logged, reported), never a failed future
	 */
	public CompletableFuture<Answer> succeededAsync(Reservation reservation, StoredResponse response,
			Executor executor) {
		if (!finish(reservation)) {
			return CompletableFuture.completedFuture(new Answer.Own(response));
		}
		return this.model.succeeded(reservation, response).finishAsync(executor);
	}

	/**
	 * Whether an answer with this status is recorded in this mode: a final one in lease
	 * mode, a success (2xx) in record-after-success mode. Under atomic completion a front
	 * door commits a run's own writes only together with its record, and rolls them back
	 * for every other answer.
	 */
	public boolean records(int status) {
		return this.model.records(status);
	}

	/**
	 * Atomic completion: records the response inside the transaction that holds the run's
	 * own writes (the store joins it, see
	 * {@link IdempotencyStore#joinsCurrentTransaction()}) and says whether that
	 * transaction may commit. Reports nothing yet: once the transaction has ended, the
	 * front door calls {@link #transactionEnded} (or {@link #commitFailed}).
	 * <p>
	 * Lease mode completes the reservation; if another owner took the record over, or the
	 * store failed, the transaction rolls back. Record-after-success mode inserts the
	 * record: if another attempt of the same request recorded first (the insert waited
	 * for that attempt's commit), the transaction rolls back and the answer is the
	 * recorded response, as a replay; if the key holds another request's record,
	 * {@code 422 key-reused}; a lease-mode reservation, {@code request-in-flight}; a
	 * store failure, {@code 503 store-unavailable}. Every refusal comes with a rollback,
	 * so it is true: nothing of the run was done.
	 * @param response a response whose status is {@link #records recorded} and whose body
	 * fits {@code idempotency.response.max-body-size}
	 * @throws IllegalArgumentException if the response is not one that is recorded
	 * @throws IllegalStateException if the reservation was finished already
	 */
	public AtomicOutcome succeededInTransaction(Reservation reservation, StoredResponse response) {
		return inTransaction(reservation, response).finish();
	}

	/**
	 * {@link #succeededInTransaction} for a front door that began the transaction itself
	 * and commits it right after, with nothing else run in it: the store may commit it
	 * with the record, in the same round trip
	 * ({@link IdempotencyStore#lastInJoinedTransaction}), and the front door's commit
	 * then has nothing left to send. The outcome and the front door's steps after it are
	 * the same.
	 */
	public AtomicOutcome succeededAsLastInTransaction(Reservation reservation, StoredResponse response) {
		return this.store.lastInJoinedTransaction(() -> succeededInTransaction(reservation, response));
	}

	/**
	 * {@link #succeededInTransaction} without blocking the calling thread: the store call
	 * through the store's non-blocking variant ({@link IdempotencyStore#completeAsync} or
	 * {@link IdempotencyStore#recordCompletedAsync}), made on the calling thread (so that
	 * a store that joins the caller's transaction sees it there), decided on the thread
	 * that completes it.
	 * @param executor where a blocking store runs the call
	 * @throws IllegalArgumentException if the response is not one that is recorded
	 * @throws IllegalStateException if the reservation was finished already
	 */
	public CompletableFuture<AtomicOutcome> succeededInTransactionAsync(Reservation reservation,
			StoredResponse response, Executor executor) {
		return inTransaction(reservation, response).finishAsync(executor);
	}

	private Finishing<AtomicOutcome> inTransaction(Reservation reservation, StoredResponse response) {
		if (!records(response.status()) || response.body().length > this.settings.maxBodyBytes()) {
			throw new IllegalArgumentException("A response with status " + response.status() + " and "
					+ response.body().length + " bytes is not recorded: roll its transaction back instead");
		}
		if (!finish(reservation)) {
			throw new IllegalStateException(reservation + " was finished already");
		}
		return this.model.succeededInTransaction(reservation, response);
	}

	/**
	 * Atomic completion: the transaction of a run that {@link #succeededInTransaction}
	 * has ended. Reports the run's result; if the transaction did not commit, releases a
	 * lease-mode record that is still this run's, so the key is free again at once.
	 * @param committed whether the transaction committed (if the outcome asked for a
	 * commit and it failed, the run is reported as a store error; a commit that failed
	 * with the application's own error is {@link #commitFailed})
	 */
	public void transactionEnded(Reservation reservation, AtomicOutcome outcome, boolean committed) {
		ended(reservation, outcome, committed).finish();
	}

	/**
	 * {@link #transactionEnded} without blocking the calling thread, as
	 * {@link #succeededAsync}.
	 * @param executor where a blocking store runs the call
	 */
	public CompletableFuture<@Nullable Void> transactionEndedAsync(Reservation reservation, AtomicOutcome outcome,
			boolean committed, Executor executor) {
		return ended(reservation, outcome, committed).finishAsync(executor);
	}

	private Finishing<@Nullable Void> ended(Reservation reservation, AtomicOutcome outcome, boolean committed) {
		if (committed) {
			this.reporter.finished(outcome.result(), reservation);
			return Finishing.done(null);
		}
		return this.model.rolledBack(reservation, outcome,
				outcome.commits() ? ExecutionResult.STORE_ERROR : outcome.result());
	}

	/**
	 * Atomic completion: the commit that {@link #succeededInTransaction} asked for failed
	 * with the application's own error, not the store's: a check of its writes deferred
	 * to the commit (a constraint, a trigger), or writes a session sent only then (JPA
	 * without a flush). Reported as a run that failed ({@link ExecutionResult#RELEASED},
	 * the observation carrying {@code error}), as if its handler had thrown it, and a
	 * lease-mode record that is still this run's is released: nothing of the run was
	 * done, and a retry runs it again.
	 */
	public void commitFailed(Reservation reservation, AtomicOutcome outcome, Throwable error) {
		observeError(reservation, error);
		this.model.rolledBack(reservation, outcome, ExecutionResult.RELEASED).finish();
	}

	/**
	 * {@link #commitFailed} without blocking the calling thread, as
	 * {@link #succeededAsync}.
	 * @param executor where a blocking store runs the call
	 */
	public CompletableFuture<@Nullable Void> commitFailedAsync(Reservation reservation, AtomicOutcome outcome,
			Throwable error, Executor executor) {
		observeError(reservation, error);
		return this.model.rolledBack(reservation, outcome, ExecutionResult.RELEASED).finishAsync(executor);
	}

	/**
	 * Atomic completion: the database rolled back the run's transaction to settle a
	 * conflict with another transaction (a deadlock, a serialization failure: SQLState
	 * class 40), as the record was written ({@link AtomicOutcome#conflicted()}) or at the
	 * commit. Nothing of the run was done. Called once the transaction has ended, in
	 * place of {@link #transactionEnded} or {@link #commitFailed}; reports the run's
	 * result. In record-after-success mode the other transaction may be another attempt
	 * of the same request: its recorded answer, once it is committed (waited for up to
	 * {@code in-flight.wait}), is the answer ({@link AtomicOutcome.Replay}); otherwise,
	 * and in lease mode (the record released), an error to retry
	 * ({@link AtomicOutcome.Refuse}). Blocks while it waits.
	 */
	public AtomicOutcome transactionConflicted(Reservation reservation, AtomicOutcome outcome) {
		return this.model.conflicted(reservation, outcome);
	}

	/**
	 * {@link #transactionConflicted} without blocking the calling thread: its looks
	 * through the store's non-blocking variant, its waits delays that hold no thread.
	 * @param executor where a blocking store runs its calls
	 */
	public CompletableFuture<AtomicOutcome> transactionConflictedAsync(Reservation reservation, AtomicOutcome outcome,
			Executor executor) {
		return this.model.conflictedAsync(reservation, outcome, executor);
	}

	/**
	 * The error for a request whose transaction was rolled back although its answer was
	 * to be recorded with it: nothing was done, and a retry runs it again.
	 * @param why what happened, in words
	 */
	public IdempotencyError transactionRolledBack(String why) {
		return this.refusals.transactionRolledBack(why);
	}

	/**
	 * The operation's response was larger than may be stored: released, never truncated.
	 */
	public void responseTooLarge(Reservation reservation, long bodyBytes) {
		if (finish(reservation)) {
			bodyTooLarge(reservation, bodyBytes, null).finish();
		}
	}

	/**
	 * {@link #responseTooLarge} without blocking the calling thread, as
	 * {@link #succeededAsync}.
	 * @param executor a bounded executor for a blocking store's calls
	 */
	public CompletableFuture<@Nullable Void> responseTooLargeAsync(Reservation reservation, long bodyBytes,
			Executor executor) {
		if (!finish(reservation)) {
			return CompletableFuture.completedFuture(null);
		}
		return bodyTooLarge(reservation, bodyBytes, (@Nullable Void) null).finishAsync(executor);
	}

	/**
	 * The operation failed (exception, or a response that was not captured): releases the
	 * key.
	 */
	public void failed(Reservation reservation, String reason) {
		if (finish(reservation)) {
			this.model.notRecorded(reservation, reason, ExecutionResult.RELEASED, null).finish();
		}
	}

	/**
	 * {@link #failed(Reservation, String)} without blocking the calling thread, as
	 * {@link #succeededAsync}.
	 * @param executor a bounded executor for a blocking store's calls
	 */
	public CompletableFuture<@Nullable Void> failedAsync(Reservation reservation, String reason, Executor executor) {
		if (!finish(reservation)) {
			return CompletableFuture.completedFuture(null);
		}
		return this.model.notRecorded(reservation, reason, ExecutionResult.RELEASED, (@Nullable Void) null)
			.finishAsync(executor);
	}

	/**
	 * The operation threw: releases the key, and the call's observation carries
	 * {@code error}.
	 */
	public void failed(Reservation reservation, String reason, Throwable error) {
		threw(reservation, error);
		failed(reservation, reason);
	}

	/**
	 * {@link #failed(Reservation, String, Throwable)} without blocking the calling
	 * thread, as {@link #succeededAsync}.
	 * @param executor a bounded executor for a blocking store's calls
	 */
	public CompletableFuture<@Nullable Void> failedAsync(Reservation reservation, String reason, Throwable error,
			Executor executor) {
		threw(reservation, error);
		return failedAsync(reservation, reason, executor);
	}

	/**
	 * The operation threw {@code error}, whatever the front door makes of its run
	 * (released, or answered by the application's exception handling and stored): the
	 * call's observation carries it as its error. Nothing once the run is finished.
	 */
	public void threw(Reservation reservation, Throwable error) {
		if (!reservation.finished()) {
			observeError(reservation, error);
		}
	}

	private static void observeError(Reservation reservation, Throwable error) {
		Observation observation = reservation.observation();
		if (observation != null) {
			observation.error(error);
		}
	}

	/**
	 * The {@code idempotency.request} observation of a run, for a door whose handler runs
	 * without thread-locals (WebFlux: it goes into the Reactor context, so that the
	 * handler's own observations are its children); {@code null} when nothing observes.
	 */
	public @Nullable Observation observation(Reservation reservation) {
		return reservation.observation();
	}

	/**
	 * Makes the call's observation the current one on this thread until the returned
	 * scope is closed, so that what the operation observes (its handler's, method's or
	 * callback's own spans) is its child. The front door opens it around the operation
	 * and closes it, on the same thread, before the run is finished.
	 * @return the open scope, a no-op one for a call that is not observed
	 */
	public Observation.Scope openScope(Reservation reservation) {
		Observation observation = reservation.observation();
		return (observation != null) ? observation.openScope() : Observation.Scope.NOOP;
	}

	/**
	 * The operation may still be running, but its answer will not come through this call
	 * (an asynchronous request timed out or failed). Releasing the key would let a retry
	 * run it a second time beside the first: the heartbeats stop and the record is left
	 * to its lease, so a retry is told it is in flight and takes over once the lease has
	 * run out. In record-after-success mode nothing was written: a retry runs again.
	 * Calls no store, so it never blocks.
	 */
	public void abandoned(Reservation reservation, String reason) {
		if (finish(reservation)) {
			logger.info("Abandoned " + reservation + ": " + reason + "; " + this.model.afterAbandoning());
			this.reporter.finished(ExecutionResult.ABANDONED, reservation);
		}
	}

	/** A lease still held when the engine stops: released, see {@link #stop()}. */
	void releaseAtStop(Reservation.Lease reservation) {
		if (finish(reservation)) {
			logger.warn(reservation + " released as the engine stops (the application is shutting down) before its"
					+ " run finished; a retry runs it again at once instead of after the lease");
			this.model.notRecorded(reservation, "the engine stopped", ExecutionResult.RELEASED, null).finish();
		}
	}

	/** Same as {@link #stop()}. */
	@Override
	public void close() {
		stop();
	}

	// The steps both models share

	/**
	 * A response too large to store: logged, and the step that frees the key as after a
	 * failure, then gives {@code value}.
	 */
	<A extends @Nullable Object> Finishing<A> bodyTooLarge(Reservation reservation, long bodyBytes, A value) {
		boolean recordsAfterSuccess = reservation instanceof Reservation.RecordAfterSuccess;
		logger.warn("Response of " + reservation + " has " + bodyBytes + " bytes, more than the "
				+ this.settings.maxBodyBytes() + " that may be stored (idempotency.response.max-body-size);"
				+ (recordsAfterSuccess ? " not recorded" : " released") + ", a retry runs it again");
		return this.model.notRecorded(reservation, "body too large", ExecutionResult.BODY_TOO_LARGE, value);
	}

	/**
	 * Marks the reservation finished and stops its heartbeat; false if it already was.
	 */
	boolean finish(Reservation reservation) {
		if (!reservation.finish()) {
			return false;
		}
		this.heartbeat.forget(reservation);
		return true;
	}

	/**
	 * The key as a store keeps it, given as the client sent it, in the format of the
	 * operation it was sent to and for the door that took it, for an operator looking it
	 * up: what {@link #begin} stores, by the same parsing. The canonical form of a UUID
	 * (any case, quoted or not) for the UUID formats; for {@link KeyFormat#OPAQUE} the
	 * key as sent (case and quotes count); a method call's (the method door's, the
	 * template's) after {@code "method "}; hashed when longer than
	 * {@link RecordId#MAX_KEY_LENGTH}.
	 * @param key the key as the client sent it
	 * @param format the format of its operation, not {@link KeyFormat#DEFAULT}
	 * @param door the door that took it
	 * @return the key of its {@link RecordId}
	 * @throws InvalidIdempotencyKeyException with the reason in words, if the format
	 * refuses the key
	 */
	public static String storedKey(String key, KeyFormat format, IdempotentCall.Door door) {
		return StoredIds.key(key, format, door);
	}

	/**
	 * The scope as a store keeps it ({@link RecordId#scope()}): as {@link #begin} stores
	 * it, hashed when longer than {@link RecordId#MAX_SCOPE_LENGTH}.
	 * @param scope the scope as resolved
	 * @return the scope of its {@link RecordId}
	 */
	public static String storedScope(String scope) {
		return StoredIds.scope(scope);
	}

	/**
	 * The record a door keeps a key under in a scope: the HTTP door's keys and a method
	 * call's (the method door's, the template's) are kept apart, so that one key used by
	 * both, a handler passing its own {@code Idempotency-Key} to a keyed method, is two
	 * records; scope and key hashed as {@link #begin} does when they are too long.
	 * @param canonicalKey the key in the canonical form of its format (a UUID in lower
	 * case, an opaque key as sent)
	 */
	public static RecordId recordId(String scope, String canonicalKey, IdempotentCall.Door door) {
		return StoredIds.of(scope, canonicalKey, door);
	}

}
