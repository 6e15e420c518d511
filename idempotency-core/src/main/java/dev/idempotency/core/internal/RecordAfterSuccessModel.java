package dev.idempotency.core.internal;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

import dev.idempotency.core.ExecutionResult;
import dev.idempotency.core.IdempotencyOutcome;
import dev.idempotency.store.CompletedRecordRequest;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.RecordState;
import dev.idempotency.store.StoredResponse;
import dev.idempotency.store.TransactionConflictException;
import io.micrometer.observation.Observation;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Record-after-success mode: the call reads the record before the operation instead of
 * reserving it, nothing is written while the operation runs (no lease, no heartbeat), and
 * a success is recorded afterwards with one conditional insert. If another attempt of the
 * same request recorded its success first (both ran), that recorded response is the
 * answer, so that every attempt and every retry gets the same one.
 */
final class RecordAfterSuccessModel implements ProtocolModel {

	/** Logs as the engine, whose logger name users already configure. */
	private static final Log logger = LogFactory.getLog(IdempotencyEngine.class);

	private final IdempotencyEngine engine;

	private final EngineReporter reporter;

	private final Refusals refusals;

	private final ExistingRecords existingRecords;

	RecordAfterSuccessModel(IdempotencyEngine engine, EngineReporter reporter, Refusals refusals,
			ExistingRecords existingRecords) {
		this.engine = engine;
		this.reporter = reporter;
		this.refusals = refusals;
		this.existingRecords = existingRecords;
	}

	/**
	 * One read before the operation. No record: run it, holding nothing. A record: as in
	 * lease mode (replay, 422, or wait for one in progress, which a lease-mode node may
	 * have left during a change of mode).
	 */
	/**
	 * Reads the key: absent, run (nothing is written before the run); otherwise the
	 * record that holds it answers.
	 */
	@Override
	public Lookup<Optional<IdempotencyRecord>> lookup(RecordId id, IdempotentCall call, Duration retention,
			@Nullable Observation observation, boolean atomicCompletion) {
		String operation = call.operation();
		return new Lookup<>(this.existingRecords, this.refusals, call) {

			@Override
			Optional<IdempotencyRecord> look() {
				return RecordAfterSuccessModel.this.reporter.timed("find",
						() -> RecordAfterSuccessModel.this.engine.store().find(id));
			}

			@Override
			CompletionStage<Optional<IdempotencyRecord>> lookAsync(Executor executor) {
				return RecordAfterSuccessModel.this.reporter.timedAsync("find",
						() -> RecordAfterSuccessModel.this.engine.store().findAsync(id, executor));
			}

			@Override
			@Nullable Decision decide(Optional<IdempotencyRecord> found) {
				if (found.isEmpty()) {
					RecordAfterSuccessModel.this.reporter.report(IdempotencyOutcome.EXECUTED, operation, id);
					return new Decision.Proceed(
							new Reservation.RecordAfterSuccess(id, operation, fingerprint(), retention, observation));
				}
				return existing(found.get());
			}

		};
	}

	/** Only a success (2xx) is recorded. */
	@Override
	public boolean records(int status) {
		return status >= 200 && status < 300;
	}

	/**
	 * One conditional insert of a success that fits; what the store had instead decides
	 * the answer.
	 */
	@Override
	public Finishing<Answer> succeeded(Reservation reservation, StoredResponse response) {
		Reservation.RecordAfterSuccess run = run(reservation);
		Answer own = new Answer.Own(response);
		if (!records(response.status())) {
			return notASuccess(run, response.status(), own);
		}
		if (response.body().length > this.engine.settings().maxBodyBytes()) {
			return this.engine.bodyTooLarge(run, response.body().length, own);
		}
		CompletedRecordRequest request = recordRequest(run, response);
		return new Finishing.RecordCompleted<Answer>(this.reporter, this.engine.store(), request) {

			@Override
			Answer decide(Optional<IdempotencyRecord> existing) {
				return recorded(run, existing, own);
			}

			@Override
			Answer storeFailed(Exception ex) {
				logger.error("Could not record the response of " + run + "; answered unrecorded, a retry runs it again",
						ex);
				RecordAfterSuccessModel.this.reporter.finished(ExecutionResult.STORE_ERROR, run);
				return own;
			}

		};
	}

	/**
	 * What the conditional insert found: nothing (recorded), the same request's record
	 * (recorded first by another attempt: its answer), or another record (not recorded).
	 */
	private Answer recorded(Reservation.RecordAfterSuccess run, Optional<IdempotencyRecord> existing, Answer own) {
		if (existing.isEmpty()) {
			this.reporter.finished(ExecutionResult.COMPLETED, run);
			return own;
		}
		IdempotencyRecord record = existing.get();
		if (isCompletedFor(record, run)) {
			// Two first attempts of one request both ran: the model's accepted cost. All
			// of them, and every retry, get the answer recorded first.
			return answerRecorded(run, record, "recorded its response first");
		}
		logger.warn("Could not record the response of "
				+ run + ": the key holds " + ((record.state() == RecordState.COMPLETED)
						? "the record of another request" : "a reservation in progress (lease mode)")
				+ "; answered with its own response, not recorded");
		this.reporter.finished(ExecutionResult.NOT_RECORDED, run);
		return own;
	}

	/**
	 * Only a success is recorded. A final refusal (4xx) is answered but not kept: two
	 * attempts of one request may run at once in this mode, and the one that fails
	 * because the other's effect is already there (409 "already exists") answers first,
	 * being cheaper; recording it would make every attempt and retry, the one that
	 * succeeded included, be told it failed. A retry of a refusal runs again and is
	 * refused again.
	 * <p>
	 * But if the attempt it raced has recorded its success meanwhile, that is the answer
	 * to this request, also after a 5xx (a catalog may fail with a constraint violation
	 * where the other attempt's row appeared between its check and its insert). One read,
	 * on answers that are not a success only; a read that fails leaves the run's own
	 * answer.
	 */
	private Finishing<Answer> notASuccess(Reservation.RecordAfterSuccess run, int status, Answer own) {
		return new Finishing.StoreCall<Optional<IdempotencyRecord>, Answer>(this.reporter, "find") {

			@Override
			Optional<IdempotencyRecord> call() {
				return RecordAfterSuccessModel.this.engine.store().find(run.id());
			}

			@Override
			CompletionStage<Optional<IdempotencyRecord>> callAsync(Executor executor) {
				return RecordAfterSuccessModel.this.engine.store().findAsync(run.id(), executor);
			}

			@Override
			Answer decide(Optional<IdempotencyRecord> found) {
				if (found.isPresent() && isCompletedFor(found.get(), run)) {
					return answerRecorded(run, found.get(),
							"recorded its success while this one answered status " + status);
				}
				return ownAnswer();
			}

			@Override
			Answer storeFailed(Exception ex) {
				logger.debug("Could not look for a recorded answer of " + run + ": " + ex);
				return ownAnswer();
			}

			private Answer ownAnswer() {
				logger.debug("Not recorded " + run + ": status " + status
						+ " is not a success (record-after-success records 2xx only)");
				RecordAfterSuccessModel.this.reporter.finished(ExecutionResult.RELEASED, run);
				return own;
			}

		};
	}

	/** Nothing was written: there is nothing to free. */
	@Override
	public <A extends @Nullable Object> Finishing<A> notRecorded(Reservation reservation, String reason,
			ExecutionResult result, A value) {
		logger.debug("Not recorded " + reservation + ": " + reason);
		this.reporter.finished(result, reservation);
		return Finishing.done(value);
	}

	/**
	 * Inserts the record: if another attempt of the same request recorded first (the
	 * insert waited for that attempt's commit), the transaction rolls back and the answer
	 * is the recorded response, as a replay; if the key holds another request's record,
	 * {@code 422 key-reused}; a lease-mode reservation, {@code request-in-flight}; a
	 * store failure, {@code 503 store-unavailable}.
	 */
	@Override
	public Finishing<AtomicOutcome> succeededInTransaction(Reservation reservation, StoredResponse response) {
		Reservation.RecordAfterSuccess run = run(reservation);
		CompletedRecordRequest request = recordRequest(run, response);
		return new Finishing.RecordCompleted<AtomicOutcome>(this.reporter, this.engine.store(), request) {

			@Override
			AtomicOutcome decide(Optional<IdempotencyRecord> existing) {
				return recordedInTransaction(run, existing);
			}

			@Override
			AtomicOutcome storeFailed(Exception ex) {
				if (TransactionConflictException.isConflict(ex)) {
					// Such as another attempt of the same request whose commit waits for
					// this one's writes while this insert waits for its record: a
					// deadlock.
					logger.info("The database rolled back the transaction of " + run
							+ " to settle a conflict with another transaction (" + ex.getMessage()
							+ "); it answers with what another attempt records, if one does");
					return AtomicOutcome.conflict(RecordAfterSuccessModel.this.refusals.inFlight(), false);
				}
				logger.error("Could not record the response of " + run
						+ " in its transaction; the transaction is rolled back and a retry runs it again", ex);
				return AtomicOutcome.refuse(
						RecordAfterSuccessModel.this.refusals.transactionRolledBack("its answer could not be recorded"),
						ExecutionResult.STORE_ERROR, false);
			}

		};
	}

	private AtomicOutcome recordedInTransaction(Reservation.RecordAfterSuccess run,
			Optional<IdempotencyRecord> existing) {
		if (existing.isEmpty()) {
			return AtomicOutcome.commit(false);
		}
		IdempotencyRecord record = existing.get();
		if (isCompletedFor(record, run)) {
			logger.info("Another attempt of " + run + " recorded its response first; this attempt's"
					+ " transaction is rolled back and it answers with the recorded response");
			return AtomicOutcome.replay(record.completedResponse());
		}
		if (record.state() == RecordState.COMPLETED) {
			logger.info("Another request recorded its response under the key of " + run
					+ " while this one ran; this one's transaction is rolled back and it is refused 422");
			return AtomicOutcome.refuse(Refusals.keyReused(), ExecutionResult.NOT_RECORDED, false);
		}
		logger.warn("Could not record the response of " + run
				+ ": the key holds a reservation in progress (lease mode); this one's transaction is rolled back");
		return AtomicOutcome.refuse(this.refusals.inFlight(), ExecutionResult.NOT_RECORDED, false);
	}

	/** Nothing was written outside the transaction: there is nothing to free. */
	@Override
	public Finishing<@Nullable Void> rolledBack(Reservation reservation, AtomicOutcome outcome,
			ExecutionResult result) {
		this.reporter.finished(result, reservation);
		return Finishing.done(null);
	}

	/**
	 * Nothing of the run was done; the other transaction may be another attempt of the
	 * same request, committing now: its recorded answer is this one's, as a replay,
	 * looked for until {@code in-flight.wait} has passed. Another request's record:
	 * {@code 422}; none: the in-flight error (a retry runs it, or replays).
	 */
	@Override
	public AtomicOutcome conflicted(Reservation reservation, AtomicOutcome outcome) {
		Reservation.RecordAfterSuccess run = run(reservation);
		Instant deadline = this.existingRecords.inFlightDeadline();
		while (true) {
			Optional<IdempotencyRecord> found;
			try {
				found = this.reporter.timed("find", () -> this.engine.store().find(run.id()));
			}
			catch (RuntimeException ex) {
				logger.debug("Could not look for the answer recorded for " + run + ": " + ex);
				found = Optional.empty();
			}
			AtomicOutcome answer = afterConflict(run, found, deadline);
			if (answer != null) {
				return answer;
			}
			if (!sleep(this.existingRecords.pollDelay(deadline))) {
				return gaveUp(run);
			}
		}
	}

	@Override
	public CompletableFuture<AtomicOutcome> conflictedAsync(Reservation reservation, AtomicOutcome outcome,
			Executor executor) {
		Reservation.RecordAfterSuccess run = run(reservation);
		return conflictedAsync(run, this.existingRecords.inFlightDeadline(), executor);
	}

	private CompletableFuture<AtomicOutcome> conflictedAsync(Reservation.RecordAfterSuccess run, Instant deadline,
			Executor executor) {
		CompletionStage<Optional<IdempotencyRecord>> looked;
		try {
			looked = this.reporter.timedAsync("find", () -> this.engine.store().findAsync(run.id(), executor));
		}
		catch (RuntimeException ex) {
			looked = CompletableFuture.failedFuture(ex);
		}
		return looked.handle((found, error) -> {
			if (error != null) {
				logger.debug("Could not look for the answer recorded for " + run + ": " + error);
			}
			return afterConflict(run, (found != null) ? found : Optional.<IdempotencyRecord>empty(), deadline);
		}).thenCompose((answer) -> {
			if (answer != null) {
				return CompletableFuture.completedFuture(answer);
			}
			Executor later = CompletableFuture.delayedExecutor(
					Math.max(1, this.existingRecords.pollDelay(deadline).toMillis()), TimeUnit.MILLISECONDS, executor);
			return CompletableFuture.supplyAsync(() -> run, later)
				.thenCompose((same) -> conflictedAsync(same, deadline, executor));
		}).toCompletableFuture();
	}

	/**
	 * What a look after a conflict found decides: the answer another attempt recorded, a
	 * refusal, or {@code null}: look again after a poll delay.
	 */
	private @Nullable AtomicOutcome afterConflict(Reservation.RecordAfterSuccess run, Optional<IdempotencyRecord> found,
			Instant deadline) {
		IdempotencyRecord record = found.orElse(null);
		if (record != null && isCompletedFor(record, run)) {
			answerRecorded(run, record, "recorded its response as this one's transaction was rolled back");
			return AtomicOutcome.replay(record.completedResponse());
		}
		if (record != null && record.state() == RecordState.COMPLETED) {
			this.reporter.finished(ExecutionResult.NOT_RECORDED, run);
			return AtomicOutcome.refuse(Refusals.keyReused(), ExecutionResult.NOT_RECORDED, false);
		}
		Duration delay = this.existingRecords.pollDelay(deadline);
		if (delay.isNegative() || delay.isZero()) {
			return gaveUp(run);
		}
		return null;
	}

	private AtomicOutcome gaveUp(Reservation.RecordAfterSuccess run) {
		this.reporter.finished(ExecutionResult.NOT_RECORDED, run);
		return AtomicOutcome.refuse(this.refusals.inFlight(), ExecutionResult.NOT_RECORDED, false);
	}

	private static boolean sleep(Duration delay) {
		try {
			Thread.sleep(Math.max(1, delay.toMillis()));
			return true;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

	@Override
	public String afterAbandoning() {
		return "nothing was recorded, a retry runs it again";
	}

	private static CompletedRecordRequest recordRequest(Reservation.RecordAfterSuccess run, StoredResponse response) {
		return new CompletedRecordRequest(run.id(), run.fingerprint(), run.operation(), response, run.retention());
	}

	/** Whether {@code record} is the completed record of the same request. */
	private static boolean isCompletedFor(IdempotencyRecord record, Reservation.RecordAfterSuccess run) {
		return record.state() == RecordState.COMPLETED && record.fingerprint().equals(run.fingerprint());
	}

	/**
	 * Answers with the response another attempt of the same request recorded, and reports
	 * it.
	 */
	private Answer answerRecorded(Reservation.RecordAfterSuccess run, IdempotencyRecord record, String what) {
		logger.info("Another attempt of " + run + " " + what + "; answering with the recorded response");
		this.reporter.finished(ExecutionResult.ANSWERED_RECORDED, run);
		return new Answer.Recorded(record.completedResponse());
	}

	private static Reservation.RecordAfterSuccess run(Reservation reservation) {
		if (reservation instanceof Reservation.RecordAfterSuccess run) {
			return run;
		}
		throw new IllegalArgumentException(reservation + " was not made by a record-after-success engine");
	}

}
