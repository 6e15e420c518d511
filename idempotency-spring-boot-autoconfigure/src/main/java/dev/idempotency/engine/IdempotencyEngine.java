package dev.idempotency.engine;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import dev.idempotency.key.IdempotencyKey;
import dev.idempotency.key.InvalidIdempotencyKeyException;
import dev.idempotency.store.CompletedRecordRequest;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.IdempotencyStoreFullException;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.RecordState;
import dev.idempotency.store.ReserveRequest;
import dev.idempotency.store.ReserveResult;
import dev.idempotency.store.StoredResponse;
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
 * reservation.
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

	private final Clock clock;

	private final IdempotencyListener listener;

	/**
	 * The heartbeat thread while the engine runs; null before {@link #start()} and after
	 * {@link #stop()}.
	 */
	private @Nullable ScheduledExecutorService heartbeats;

	private boolean stopped;

	private final Object lifecycleMonitor = new Object();

	/** Reservations whose operation is running, kept alive by {@link #beatRunning()}. */
	private final Set<Reservation> running = ConcurrentHashMap.newKeySet();

	/**
	 * An engine whose heartbeat thread starts with {@link #start()}, or with the first
	 * call to {@link #begin} if nothing started it before; {@link #stop()} (or
	 * {@link #close()}) ends it.
	 */
	public IdempotencyEngine(IdempotencyStore store, IdempotencySettings settings, Clock clock,
			IdempotencyListener listener) {
		this.store = store;
		this.settings = settings;
		this.clock = clock;
		this.listener = listener;
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
		synchronized (this.lifecycleMonitor) {
			if (this.heartbeats != null) {
				return;
			}
			ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor((runnable) -> {
				Thread thread = new Thread(runnable, "idempotency-heartbeat");
				thread.setDaemon(true);
				return thread;
			});
			executor.scheduleWithFixedDelay(this::beatRunning, sweepNanos(this.settings), sweepNanos(this.settings),
					TimeUnit.NANOSECONDS);
			this.heartbeats = executor;
			this.stopped = false;
		}
	}

	/**
	 * Stops the heartbeat thread and waits up to 5 seconds for it to end. From now on
	 * {@link #begin} refuses keyed calls (503 store-unavailable) until {@link #start()}
	 * again: an owner without heartbeats would be taken over after one lease.
	 */
	public void stop() {
		ScheduledExecutorService executor;
		synchronized (this.lifecycleMonitor) {
			executor = this.heartbeats;
			this.heartbeats = null;
			this.stopped = true;
		}
		if (executor != null) {
			executor.shutdownNow();
			try {
				executor.awaitTermination(5, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
	}

	/** Whether the heartbeat thread runs. */
	public boolean isRunning() {
		synchronized (this.lifecycleMonitor) {
			return this.heartbeats != null;
		}
	}

	/** Starts the engine if nothing did yet; false if it was stopped. */
	private boolean ensureRunning() {
		synchronized (this.lifecycleMonitor) {
			if (this.heartbeats != null) {
				return true;
			}
			if (this.stopped) {
				return false;
			}
		}
		start();
		return true;
	}

	public IdempotencySettings settings() {
		return this.settings;
	}

	public IdempotencyStore store() {
		return this.store;
	}

	/** Whether a response with this status is a success (2xx). */
	private static boolean isSuccess(int status) {
		return status >= 200 && status < 300;
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
		if (call.keyValues().isEmpty()) {
			if (call.keyRequired()) {
				return reject(IdempotencyOutcome.INVALID_KEY, call.operation(), IdempotencyError
					.of(IdempotencyErrorType.KEY_REQUIRED, "this operation requires an idempotency key"));
			}
			report(IdempotencyOutcome.UNPROTECTED, call.operation(), null);
			return new Decision.Proceed(null);
		}
		if (call.keyValues().size() > 1) {
			return invalidKey(call, "send exactly one idempotency key, got " + call.keyValues().size());
		}
		IdempotencyKey key;
		try {
			String raw = call.keyValues().get(0);
			key = switch (call.keyFormat()) {
				case UUID_V7 -> IdempotencyKey.parseUuidV7(raw);
				case UUID -> IdempotencyKey.parseUuid(raw);
				case OPAQUE -> IdempotencyKey.opaque(raw);
			};
		}
		catch (InvalidIdempotencyKeyException ex) {
			return invalidKey(call, ex.getMessage());
		}
		String windowProblem = checkWindow(key);
		if (windowProblem != null) {
			if (this.settings.keyAgePolicy() == IdempotencySettings.KeyAgePolicy.REJECT) {
				return invalidKey(call, windowProblem);
			}
			logger.warn("Accepting idempotency key " + key.value() + " for " + call.operation() + ": " + windowProblem);
		}
		RecordId id = new RecordId(storableScope(call.scope()), storableKey(key.value()));
		if (this.settings.mode() == IdempotencySettings.Mode.RECORD_AFTER_SUCCESS) {
			// Nothing is held while the operation runs: no heartbeat thread is needed.
			return findBeforeRunning(id, call.fingerprint().get(), call, retentionFor(key));
		}
		if (!ensureRunning()) {
			return reject(IdempotencyOutcome.STORE_ERROR, call.operation(),
					new IdempotencyError(IdempotencyErrorType.STORE_UNAVAILABLE, 503,
							"the idempotency engine is stopped (the application is shutting down); nothing was done,"
									+ " retry later",
							this.settings.storeRetryAfter()));
		}
		String fingerprint = call.fingerprint().get();
		return reserve(id, fingerprint, call, retentionFor(key));
	}

	/**
	 * The operation finished with this response: stores it if it is final and fits, else
	 * releases the key so that a retry runs again.
	 * <p>
	 * In record-after-success mode it records the response if no record holds the key. If
	 * another attempt of the same request recorded its response first (both ran), the
	 * answer is that recorded response, so that every attempt and every retry gets the
	 * same one.
	 * @return the response to answer with: {@code response} itself, or in
	 * record-after-success mode the response recorded first by another attempt of the
	 * same request
	 */
	public StoredResponse succeeded(Reservation reservation, StoredResponse response) {
		if (!finish(reservation)) {
			return response;
		}
		if (reservation.recordsAfterSuccess()) {
			return record(reservation, response);
		}
		if (!isFinal(response.status())) {
			doRelease(reservation, "status " + response.status() + " is not final", ExecutionResult.RELEASED);
			return response;
		}
		if (response.body().length > this.settings.maxBodyBytes()) {
			bodyTooLarge(reservation, response.body().length);
			return response;
		}
		try {
			if (timed("complete",
					() -> this.store.complete(reservation.id(), reservation.requiredOwnerToken(), response))) {
				finished(ExecutionResult.COMPLETED, reservation);
			}
			else {
				ownershipLost(reservation, "complete");
			}
		}
		catch (RuntimeException ex) {
			// The lease runs out (or the store released the record) and a retry runs it:
			// the key is not stuck.
			logger.error("Could not store the response of " + reservation
					+ "; a retry runs it again once the record is released or its lease runs out", ex);
			finished(ExecutionResult.STORE_ERROR, reservation);
		}
		return response;
	}

	/**
	 * Record-after-success: one conditional insert of a final response that fits; what
	 * the store had instead decides the answer.
	 */
	private StoredResponse record(Reservation reservation, StoredResponse response) {
		if (!isSuccess(response.status())) {
			// Only a success is recorded. A final refusal (4xx) is answered but not kept:
			// two attempts of one request may run at once in this mode, and the one that
			// fails because the other's effect is already there (409 "already exists")
			// answers first, being cheaper; recording it would make every attempt and
			// retry, the one that succeeded included, be told it failed. A retry of a
			// refusal runs again and is refused again.
			// But if the attempt it raced has recorded its success meanwhile, that is the
			// answer to this request, also after a 5xx (a catalog may fail with a
			// constraint violation where the other attempt's row appeared between its
			// check and its insert). One read, on answers that are not a success only.
			IdempotencyRecord recorded = recordedSuccess(reservation);
			if (recorded != null) {
				return answerRecorded(reservation, recorded,
						"recorded its success while this one answered status " + response.status());
			}
			logger.debug("Not recorded " + reservation + ": status " + response.status()
					+ " is not a success (record-after-success records 2xx only)");
			finished(ExecutionResult.RELEASED, reservation);
			return response;
		}
		if (response.body().length > this.settings.maxBodyBytes()) {
			bodyTooLarge(reservation, response.body().length);
			return response;
		}
		String fingerprint = reservation.fingerprint();
		CompletedRecordRequest request = new CompletedRecordRequest(reservation.id(), fingerprint,
				reservation.operation(), response, reservation.retention());
		Optional<IdempotencyRecord> existing;
		try {
			existing = timed("record_completed", () -> this.store.recordCompleted(request));
		}
		catch (RuntimeException ex) {
			logger.error(
					"Could not record the response of " + reservation + "; answered unrecorded, a retry runs it again",
					ex);
			finished(ExecutionResult.STORE_ERROR, reservation);
			return response;
		}
		if (existing.isEmpty()) {
			finished(ExecutionResult.COMPLETED, reservation);
			return response;
		}
		IdempotencyRecord record = existing.get();
		if (isCompletedFor(record, reservation)) {
			// Two first attempts of one request both ran: the model's accepted cost. All
			// of them, and every retry, get the answer recorded first.
			return answerRecorded(reservation, record, "recorded its response first");
		}
		logger.warn("Could not record the response of "
				+ reservation + ": the key holds " + ((record.state() == RecordState.COMPLETED)
						? "the record of another request" : "a reservation in progress (lease mode)")
				+ "; answered with its own response, not recorded");
		finished(ExecutionResult.NOT_RECORDED, reservation);
		return response;
	}

	/**
	 * Whether an answer with this status is recorded in this mode: a final one in lease
	 * mode, a success (2xx) in record-after-success mode. Under atomic completion a front
	 * door commits a run's own writes only together with its record, and rolls them back
	 * for every other answer.
	 */
	public boolean records(int status) {
		return (this.settings.mode() == IdempotencySettings.Mode.RECORD_AFTER_SUCCESS) ? isSuccess(status)
				: isFinal(status);
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
		if (reservation.recordsAfterSuccess()) {
			return recordInTransaction(reservation, response);
		}
		try {
			if (timed("complete",
					() -> this.store.complete(reservation.id(), reservation.requiredOwnerToken(), response))) {
				return AtomicOutcome.commit(true);
			}
			logger.warn("Could not complete " + reservation
					+ ": another owner took it over; its transaction is rolled back, and another request runs it");
			return AtomicOutcome.refuse(inFlightError(), ExecutionResult.OWNERSHIP_LOST, false);
		}
		catch (RuntimeException ex) {
			logger.error("Could not store the response of " + reservation
					+ " in its transaction; the transaction is rolled back and a retry runs it again", ex);
			return AtomicOutcome.refuse(transactionRolledBack("its answer could not be recorded"),
					ExecutionResult.STORE_ERROR, true);
		}
	}

	private AtomicOutcome recordInTransaction(Reservation reservation, StoredResponse response) {
		CompletedRecordRequest request = new CompletedRecordRequest(reservation.id(), reservation.fingerprint(),
				reservation.operation(), response, reservation.retention());
		Optional<IdempotencyRecord> existing;
		try {
			existing = timed("record_completed", () -> this.store.recordCompleted(request));
		}
		catch (RuntimeException ex) {
			logger.error("Could not record the response of " + reservation
					+ " in its transaction; the transaction is rolled back and a retry runs it again", ex);
			return AtomicOutcome.refuse(transactionRolledBack("its answer could not be recorded"),
					ExecutionResult.STORE_ERROR, false);
		}
		if (existing.isEmpty()) {
			return AtomicOutcome.commit(false);
		}
		IdempotencyRecord record = existing.get();
		if (isCompletedFor(record, reservation)) {
			logger.info("Another attempt of " + reservation + " recorded its response first; this attempt's"
					+ " transaction is rolled back and it answers with the recorded response");
			return AtomicOutcome.replay(record.completedResponse());
		}
		if (record.state() == RecordState.COMPLETED) {
			logger.info("Another request recorded its response under the key of " + reservation
					+ " while this one ran; this one's transaction is rolled back and it is refused 422");
			return AtomicOutcome.refuse(
					IdempotencyError.of(IdempotencyErrorType.KEY_REUSED,
							"this idempotency key was already used for a different request; use a new key"),
					ExecutionResult.NOT_RECORDED, false);
		}
		logger.warn("Could not record the response of " + reservation
				+ ": the key holds a reservation in progress (lease mode); this one's transaction is rolled back");
		return AtomicOutcome.refuse(inFlightError(), ExecutionResult.NOT_RECORDED, false);
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
			finished(outcome.result(), reservation);
			return;
		}
		ExecutionResult result = outcome.commits() ? ExecutionResult.STORE_ERROR : outcome.result();
		if (!reservation.recordsAfterSuccess() && (outcome.commits() || outcome.releaseAfterRollback())) {
			doRelease(reservation, "its transaction did not commit", result);
			return;
		}
		finished(result, reservation);
	}

	/**
	 * The error for a request whose transaction was rolled back although its answer was
	 * to be recorded with it: nothing was done, and a retry runs it again.
	 * @param why what happened, in words
	 */
	public IdempotencyError transactionRolledBack(String why) {
		return new IdempotencyError(IdempotencyErrorType.STORE_UNAVAILABLE, 503,
				"the request's transaction was" + " rolled back (" + why + "); nothing was done, retry later",
				this.settings.storeRetryAfter());
	}

	private IdempotencyError inFlightError() {
		return new IdempotencyError(IdempotencyErrorType.REQUEST_IN_FLIGHT, this.settings.inFlightStatus().status(),
				"a request with this idempotency key is still in progress; retry later",
				this.settings.inFlightRetryAfter());
	}

	/** Whether {@code record} is the completed record of the same request. */
	private static boolean isCompletedFor(IdempotencyRecord record, Reservation reservation) {
		return record.state() == RecordState.COMPLETED && record.fingerprint().equals(reservation.fingerprint());
	}

	/**
	 * Answers with the response another attempt of the same request recorded
	 * (record-after- success mode), and reports it.
	 */
	private StoredResponse answerRecorded(Reservation reservation, IdempotencyRecord record, String what) {
		logger.info("Another attempt of " + reservation + " " + what + "; answering with the recorded response");
		finished(ExecutionResult.ANSWERED_RECORDED, reservation);
		return record.completedResponse();
	}

	/**
	 * The completed record of the same request, if another attempt recorded it; null if
	 * there is none or the store cannot say.
	 */
	private @Nullable IdempotencyRecord recordedSuccess(Reservation reservation) {
		try {
			IdempotencyRecord record = timed("find", () -> this.store.find(reservation.id())).orElse(null);
			return (record != null && isCompletedFor(record, reservation)) ? record : null;
		}
		catch (RuntimeException ex) {
			logger.debug("Could not look for a recorded answer of " + reservation + ": " + ex);
			return null;
		}
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
		if (!finish(reservation)) {
			return;
		}
		if (reservation.recordsAfterSuccess()) {
			logger.debug("Not recorded " + reservation + ": " + reason);
			finished(ExecutionResult.RELEASED, reservation);
			return;
		}
		doRelease(reservation, reason, ExecutionResult.RELEASED);
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
			logger.info("Abandoned " + reservation + ": " + reason
					+ (reservation.recordsAfterSuccess() ? "; nothing was recorded, a retry runs it again"
							: "; its record is taken over by a retry once its lease runs out"));
			finished(ExecutionResult.ABANDONED, reservation);
		}
	}

	/** Same as {@link #stop()}. */
	@Override
	public void close() {
		stop();
	}

	/**
	 * How long the record of this key is kept from now. A key is accepted until its
	 * UUIDv7 time plus lifetime and grace; for a key stamped ahead of this node's clock
	 * (by at most the clock skew, also under the warn policy) that is later than now plus
	 * lifetime and grace, so the record is kept that much longer: a retry accepted by the
	 * window always finds it.
	 */
	private Duration retentionFor(IdempotencyKey key) {
		Duration retention = this.settings.retention();
		if (key.timestamp() == null) {
			return retention;
		}
		Duration ahead = Duration.between(this.clock.instant(), key.timestamp());
		if (ahead.isNegative()) {
			return retention;
		}
		return retention.plus(min(ahead, this.settings.clockSkew()));
	}

	private Decision reserve(RecordId id, String requestFingerprint, IdempotentCall call, Duration retention) {
		String operation = call.operation();
		String fingerprint = requestFingerprint;
		Instant deadline = this.clock.instant().plus(this.settings.inFlightWait());
		while (true) {
			String ownerToken = newOwnerToken();
			long reserveStart = System.nanoTime();
			ReserveResult result;
			try {
				ReserveRequest request = new ReserveRequest(id, fingerprint, operation, ownerToken,
						this.settings.lease(), retention);
				result = timed("reserve", () -> this.store.reserve(request));
			}
			catch (RuntimeException ex) {
				return storeFailed(operation, ex);
			}
			if (result instanceof ReserveResult.Acquired acquired) {
				Reservation reservation = new Reservation(id, ownerToken, operation, acquired.takenOver(),
						reserveStart);
				this.running.add(reservation);
				report(acquired.takenOver() ? IdempotencyOutcome.TAKEN_OVER : IdempotencyOutcome.EXECUTED, operation,
						id);
				if (acquired.takenOver()) {
					logger.info("Took over idempotency key " + id.key() + " for " + operation
							+ " after its owner's lease expired");
				}
				return new Decision.Proceed(reservation);
			}
			IdempotencyRecord existing = ((ReserveResult.Existing) result).record();
			fingerprint = sameRequestFingerprint(existing, fingerprint, call);
			Decision decision = answerExisting(existing, fingerprint, operation, deadline);
			if (decision != null) {
				return decision;
			}
		}
	}

	/**
	 * Record-after-success: one read before the operation. No record: run it, holding
	 * nothing. A record: as in lease mode (replay, 422, or wait for one in progress,
	 * which a lease-mode node may have left during a change of mode).
	 */
	private Decision findBeforeRunning(RecordId id, String requestFingerprint, IdempotentCall call,
			Duration retention) {
		String operation = call.operation();
		String fingerprint = requestFingerprint;
		Instant deadline = this.clock.instant().plus(this.settings.inFlightWait());
		while (true) {
			Optional<IdempotencyRecord> found;
			try {
				found = timed("find", () -> this.store.find(id));
			}
			catch (RuntimeException ex) {
				return storeFailed(operation, ex);
			}
			if (found.isEmpty()) {
				report(IdempotencyOutcome.EXECUTED, operation, id);
				return new Decision.Proceed(Reservation.recordAfterSuccess(id, operation, fingerprint, retention));
			}
			fingerprint = sameRequestFingerprint(found.get(), fingerprint, call);
			Decision decision = answerExisting(found.get(), fingerprint, operation, deadline);
			if (decision != null) {
				return decision;
			}
		}
	}

	/**
	 * The fingerprint this call goes on with: the record's, when the record was made by
	 * the same request under an earlier fingerprint format (so that it is replayed, or
	 * taken over by the store, as the same request), else {@code fingerprint}.
	 */
	private static String sameRequestFingerprint(IdempotencyRecord record, String fingerprint, IdempotentCall call) {
		if (record.fingerprint().equals(fingerprint)
				|| !call.earlierFingerprints().get().contains(record.fingerprint())) {
			return fingerprint;
		}
		return record.fingerprint();
	}

	/**
	 * The answer to a call whose key holds a record: 422 for another request, the replay
	 * of a completed one, or for one in progress, after a wait until {@code deadline},
	 * the in-flight error; {@code null} means look again after one poll interval.
	 */
	private @Nullable Decision answerExisting(IdempotencyRecord record, String fingerprint, String operation,
			Instant deadline) {
		if (!record.fingerprint().equals(fingerprint)) {
			return reject(IdempotencyOutcome.MISMATCH, operation, IdempotencyError.of(IdempotencyErrorType.KEY_REUSED,
					"this idempotency key was already used for a different request; use a new key"));
		}
		if (record.state() == RecordState.COMPLETED) {
			report(IdempotencyOutcome.REPLAYED, operation, record.id());
			return new Decision.Replay(record.completedResponse());
		}
		Duration remaining = Duration.between(this.clock.instant(), deadline);
		// Waited long enough, or interrupted while waiting: an interruption is not a
		// store failure, so never a reason to run unprotected.
		if (remaining.isNegative() || remaining.isZero()
				|| !sleep(min(remaining, this.settings.inFlightPollInterval()))) {
			return reject(IdempotencyOutcome.IN_FLIGHT, operation, inFlightError());
		}
		return null;
	}

	private Decision storeFailed(String operation, Exception ex) {
		if (this.settings.failureMode() == IdempotencySettings.FailureMode.FAIL_OPEN) {
			logger.warn("Idempotency store " + this.store.name() + " failed; running " + operation
					+ " unprotected (fail-open): " + ex);
			report(IdempotencyOutcome.FAIL_OPEN, operation, null);
			return new Decision.Proceed(null);
		}
		if (ex instanceof IdempotencyStoreFullException full) {
			// Not a fault: no stack trace, and a refusal as cheap as the store's.
			logger.warn("Idempotency store " + this.store.name() + " is full; refusing " + operation
					+ " (fail-closed): " + full.getMessage());
			return reject(IdempotencyOutcome.STORE_ERROR, operation,
					new IdempotencyError(IdempotencyErrorType.STORE_UNAVAILABLE, 503,
							"the idempotency store is full; nothing was done, retry later", (full.retryAfter() != null)
									? wholeSecondsAtLeastOne(full.retryAfter()) : this.settings.storeRetryAfter()));
		}
		logger.error("Idempotency store " + this.store.name() + " failed; refusing " + operation + " (fail-closed)",
				ex);
		return reject(IdempotencyOutcome.STORE_ERROR, operation,
				new IdempotencyError(IdempotencyErrorType.STORE_UNAVAILABLE, 503,
						"the idempotency store is unavailable; nothing was done, retry later",
						this.settings.storeRetryAfter()));
	}

	private Decision invalidKey(IdempotentCall call, String reason) {
		return reject(IdempotencyOutcome.INVALID_KEY, call.operation(),
				IdempotencyError.of(IdempotencyErrorType.INVALID_KEY, reason));
	}

	private Decision reject(IdempotencyOutcome outcome, String operation, IdempotencyError error) {
		report(outcome, operation, null);
		return new Decision.Reject(error);
	}

	/**
	 * Reports the one outcome of a request and logs it at DEBUG as
	 * {@code outcome=<outcome> operation=<name>
	 * key=<key> scope=<first 12 hex of SHA-256(scope)>}: the scope is hashed because it
	 * names a principal.
	 */
	private void report(IdempotencyOutcome outcome, String operation, @Nullable RecordId id) {
		if (logger.isDebugEnabled()) {
			logger.debug("outcome=" + outcome.name().toLowerCase(java.util.Locale.ROOT) + " operation=" + operation
					+ ((id != null)
							? " key=" + id.key() + " scope=" + Fingerprints.sha256Hex(id.scope()).substring(0, 12)
							: ""));
		}
		this.listener.onOutcome(outcome, operation);
	}

	private @Nullable String checkWindow(IdempotencyKey key) {
		if (key.timestamp() == null) {
			return null;
		}
		Instant now = this.clock.instant();
		if (key.timestamp().isAfter(now.plus(this.settings.clockSkew()))) {
			return "the key's UUIDv7 timestamp " + key.timestamp() + " is in the future (allowed clock skew "
					+ this.settings.clockSkew() + ")";
		}
		if (key.timestamp().isBefore(now.minus(this.settings.retention()))) {
			return "the key's UUIDv7 timestamp " + key.timestamp() + " is older than its lifetime "
					+ this.settings.lifetime() + " plus grace " + this.settings.grace() + "; use a new key";
		}
		return null;
	}

	private static long sweepNanos(IdempotencySettings settings) {
		return Math.max(TimeUnit.MILLISECONDS.toNanos(1), settings.heartbeatInterval().toNanos() / 4);
	}

	private void beatRunning() {
		long due = System.nanoTime() - (this.settings.heartbeatInterval().toNanos() - sweepNanos(this.settings));
		for (Reservation reservation : this.running) {
			if (reservation.finished()) {
				this.running.remove(reservation);
			}
			else if (reservation.lastBeatNanos() - due <= 0) {
				beat(reservation);
			}
		}
	}

	private void beat(Reservation reservation) {
		// The lease runs from when the store executes the call, which is after this
		// instant.
		long start = System.nanoTime();
		try {
			if (timed("heartbeat", () -> this.store.heartbeat(reservation.id(), reservation.requiredOwnerToken(),
					this.settings.lease()))) {
				reservation.beaten(start);
			}
			else if (finish(reservation)) {
				// Not merely finished meanwhile: another request took the record over.
				logger.warn("Lost ownership of " + reservation + " while it runs; another request took it over");
				finished(ExecutionResult.OWNERSHIP_LOST, reservation);
			}
		}
		catch (RuntimeException ex) {
			// Keep beating at the next sweep: the store may come back before the lease
			// runs out.
			logger.warn("Heartbeat of " + reservation + " failed: " + ex);
		}
	}

	/** Releases the record and reports {@code result}, or what prevented the release. */
	private void doRelease(Reservation reservation, String reason, ExecutionResult result) {
		try {
			if (timed("release", () -> this.store.release(reservation.id(), reservation.requiredOwnerToken()))) {
				logger.debug("Released " + reservation + ": " + reason);
				finished(result, reservation);
			}
			else {
				ownershipLost(reservation, "release");
			}
		}
		catch (RuntimeException ex) {
			logger.error("Could not release " + reservation + "; it frees itself when its lease runs out", ex);
			finished(ExecutionResult.STORE_ERROR, reservation);
		}
	}

	private void bodyTooLarge(Reservation reservation, long bodyBytes) {
		logger.warn("Response of " + reservation + " has " + bodyBytes + " bytes, more than the "
				+ this.settings.maxBodyBytes() + " that may be stored (idempotency.response.max-body-size);"
				+ (reservation.recordsAfterSuccess() ? " not recorded" : " released") + ", a retry runs it again");
		if (reservation.recordsAfterSuccess()) {
			finished(ExecutionResult.BODY_TOO_LARGE, reservation);
			return;
		}
		doRelease(reservation, "body too large", ExecutionResult.BODY_TOO_LARGE);
	}

	private void ownershipLost(Reservation reservation, String step) {
		logger.warn("Could not " + step + " " + reservation + ": another owner took it over; nothing changed");
		finished(ExecutionResult.OWNERSHIP_LOST, reservation);
	}

	/** Reports what became of a run, once, and logs it at DEBUG like {@link #report}. */
	private void finished(ExecutionResult result, Reservation reservation) {
		if (logger.isDebugEnabled()) {
			logger.debug("result=" + result.name().toLowerCase(java.util.Locale.ROOT) + " operation="
					+ reservation.operation() + " key=" + reservation.id().key() + " scope="
					+ Fingerprints.sha256Hex(reservation.id().scope()).substring(0, 12));
		}
		this.listener.onExecutionFinished(result, reservation.operation());
	}

	private <T> T timed(String call, java.util.function.Supplier<T> storeCall) {
		long start = System.nanoTime();
		boolean failed = true;
		try {
			T result = storeCall.get();
			failed = false;
			return result;
		}
		finally {
			this.listener.onStoreCall(call, System.nanoTime() - start, failed);
		}
	}

	/**
	 * Marks the reservation finished and stops its heartbeat; false if it already was.
	 */
	private boolean finish(Reservation reservation) {
		if (!reservation.finish()) {
			return false;
		}
		this.running.remove(reservation);
		return true;
	}

	/**
	 * A fencing token: unique, never sent to clients, so it needs no secure random (whose
	 * shared lock {@code UUID.randomUUID()} would contend on under load).
	 */
	private static String newOwnerToken() {
		ThreadLocalRandom random = ThreadLocalRandom.current();
		return new java.util.UUID(random.nextLong(), random.nextLong()).toString();
	}

	static String storableScope(String scope) {
		return (scope.length() <= RecordId.MAX_SCOPE_LENGTH) ? scope : "sha256:" + Fingerprints.sha256Hex(scope);
	}

	/**
	 * The key as stored: as it is up to {@value RecordId#MAX_KEY_LENGTH} characters
	 * (every UUID, most opaque keys), else {@code "sha256 "} and the first 56 hex digits
	 * of its SHA-256 (63 characters). The space keeps a hashed key apart from every key a
	 * client can send (visible ASCII only), and stores keep their key column as it was.
	 */
	static String storableKey(String key) {
		return (key.length() <= RecordId.MAX_KEY_LENGTH) ? key
				: "sha256 " + Fingerprints.sha256Hex(key).substring(0, 56);
	}

	/** A store's wait as a Retry-After: rounded up to whole seconds, at least one. */
	private static Duration wholeSecondsAtLeastOne(Duration wait) {
		long seconds = wait.getSeconds() + ((wait.getNano() > 0) ? 1 : 0);
		return Duration.ofSeconds(Math.max(1, seconds));
	}

	private static Duration min(Duration a, Duration b) {
		return (a.compareTo(b) <= 0) ? a : b;
	}

	private static boolean sleep(Duration duration) {
		try {
			Thread.sleep(Math.max(1, duration.toMillis()));
			return true;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

}
