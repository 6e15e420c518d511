package dev.idempotency.core.internal;

import java.time.Clock;
import java.util.List;
import java.util.Set;

import dev.idempotency.core.ExecutionResult;
import dev.idempotency.core.IdempotencyError;
import dev.idempotency.core.IdempotencyListener;
import dev.idempotency.core.IdempotencyOutcome;
import dev.idempotency.core.IdempotencySettings;
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
			return decide(call, null, atomicCompletion);
		}
		Decision decision;
		try {
			decision = decide(call, observation, atomicCompletion);
		}
		catch (RuntimeException ex) {
			// Such as a request body too large to fingerprint: nothing ran.
			RequestObservations.stop(observation, ObservedOutcome.REFUSED, ex);
			throw ex;
		}
		if (!(decision instanceof Decision.Proceed proceed) || proceed.reservation() == null) {
			// A call that runs is observed until its run is finished.
			RequestObservations.stop(observation, ObservedOutcome.of(decision));
		}
		return decision;
	}

	private Decision decide(IdempotentCall call, @Nullable Observation observation, boolean atomicCompletion) {
		if (call.keyValues().isEmpty()) {
			if (call.keyRequired()) {
				return this.refusals.keyRequired(call.operation());
			}
			this.reporter.report(IdempotencyOutcome.UNPROTECTED, call.operation(), null);
			return new Decision.Proceed(null);
		}
		if (call.keyValues().size() > 1) {
			return this.refusals.invalidKey(call.operation(),
					"send exactly one idempotency key, got " + call.keyValues().size());
		}
		IdempotencyKey key;
		try {
			key = IdempotencyKey.parse(call.keyValues().get(0), call.keyFormat());
		}
		catch (InvalidIdempotencyKeyException ex) {
			return this.refusals.invalidKey(call.operation(), ex.getMessage());
		}
		String windowProblem = this.keyWindow.problem(key);
		if (windowProblem != null) {
			if (this.settings.keyAgePolicy() == IdempotencySettings.KeyAgePolicy.REJECT) {
				return this.refusals.invalidKey(call.operation(), windowProblem);
			}
			logger.warn("Accepting idempotency key " + key.value() + " for " + call.operation() + ": " + windowProblem);
		}
		if (observation != null && this.observations.keyHash()) {
			RequestObservations.keyHash(observation, key.value());
		}
		RecordId id = StoredIds.of(call.scope(), key);
		return this.model.begin(id, KeyedFingerprints.of(call, this.sealing), this.keyWindow.retentionFor(key),
				observation, atomicCompletion);
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
		return this.model.succeeded(reservation, response);
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
	 * front door calls {@link #transactionEnded}.
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
	 * commit and it failed, the run is reported as a store error)
	 */
	public void transactionEnded(Reservation reservation, AtomicOutcome outcome, boolean committed) {
		if (committed) {
			this.reporter.finished(outcome.result(), reservation);
			return;
		}
		this.model.rolledBack(reservation, outcome, outcome.commits() ? ExecutionResult.STORE_ERROR : outcome.result());
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
			bodyTooLarge(reservation, bodyBytes);
		}
	}

	/**
	 * The operation failed (exception, or a response that was not captured): releases the
	 * key.
	 */
	public void failed(Reservation reservation, String reason) {
		if (finish(reservation)) {
			this.model.notRecorded(reservation, reason, ExecutionResult.RELEASED);
		}
	}

	/**
	 * The operation may still be running, but its answer will not come through this call
	 * (an asynchronous request timed out or failed). Releasing the key would let a retry
	 * run it a second time beside the first: the heartbeats stop and the record is left
	 * to its lease, so a retry is told it is in flight and takes over once the lease has
	 * run out. In record-after-success mode nothing was written: a retry runs again.
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
			this.model.notRecorded(reservation, "the engine stopped", ExecutionResult.RELEASED);
		}
	}

	/** Same as {@link #stop()}. */
	@Override
	public void close() {
		stop();
	}

	// The steps both models share

	/** A response too large to store: logged, and the key freed as after a failure. */
	void bodyTooLarge(Reservation reservation, long bodyBytes) {
		boolean recordsAfterSuccess = reservation instanceof Reservation.RecordAfterSuccess;
		logger.warn("Response of " + reservation + " has " + bodyBytes + " bytes, more than the "
				+ this.settings.maxBodyBytes() + " that may be stored (idempotency.response.max-body-size);"
				+ (recordsAfterSuccess ? " not recorded" : " released") + ", a retry runs it again");
		this.model.notRecorded(reservation, "body too large", ExecutionResult.BODY_TOO_LARGE);
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
	 * The records a key may be kept under in a scope, given as the client sent it, for an
	 * operator looking one up: the canonical form of a UUID (quoted or not, any case),
	 * which operations with a UUID key format keep, then the key as sent, which opaque
	 * ones keep; scope and key hashed as {@link #begin} does when they are too long.
	 * @return the candidates, most likely first, empty for a key no format accepts
	 */
	public static List<RecordId> recordIds(String scope, String key) {
		return StoredIds.candidates(scope, key);
	}

}
