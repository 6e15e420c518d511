package dev.idempotency.core.internal;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.ThreadLocalRandom;

import dev.idempotency.core.ExecutionResult;
import dev.idempotency.core.IdempotencyOutcome;
import dev.idempotency.core.IdempotencyError;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.ReserveRequest;
import dev.idempotency.store.ReserveResult;
import dev.idempotency.store.StoredResponse;
import dev.idempotency.store.TransactionConflictException;
import io.micrometer.observation.Observation;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Lease mode: the call reserves its key before the operation runs and owns the record
 * while it runs, its lease kept alive by the {@link Heartbeat}; the final answer
 * completes the record, any other releases it. Every write is fenced by the owner token.
 */
final class LeaseModel implements ProtocolModel {

	/** Logs as the engine, whose logger name users already configure. */
	private static final Log logger = LogFactory.getLog(IdempotencyEngine.class);

	private final IdempotencyEngine engine;

	private final Heartbeat heartbeat;

	private final EngineReporter reporter;

	private final Refusals refusals;

	private final ExistingRecords existingRecords;

	LeaseModel(IdempotencyEngine engine, Heartbeat heartbeat, EngineReporter reporter, Refusals refusals,
			ExistingRecords existingRecords) {
		this.engine = engine;
		this.heartbeat = heartbeat;
		this.reporter = reporter;
		this.refusals = refusals;
		this.existingRecords = existingRecords;
	}

	/**
	 * A stopped engine refuses keyed calls: an owner without heartbeats would be taken
	 * over.
	 */
	@Override
	public @Nullable Decision refusal(String operation) {
		return this.heartbeat.ensureRunning() ? null : this.refusals.engineStopped(operation);
	}

	/**
	 * Reserves the key: a fresh owner token for each look. Acquired (new, or taken over
	 * after its owner's lease ran out): run, its lease kept alive by the heartbeat.
	 * Otherwise the record that holds the key answers.
	 */
	@Override
	public Lookup<ReserveResult> lookup(RecordId id, IdempotentCall call, Duration retention,
			@Nullable Observation observation, boolean atomicCompletion) {
		String operation = call.operation();
		return new Lookup<>(this.existingRecords, this.refusals, call) {

			private String ownerToken = "";

			private long reserveStart;

			private ReserveRequest next() {
				this.ownerToken = newOwnerToken();
				this.reserveStart = System.nanoTime();
				return new ReserveRequest(id, fingerprint(), operation, this.ownerToken,
						LeaseModel.this.engine.settings().lease().duration(), retention, atomicCompletion);
			}

			@Override
			ReserveResult look() {
				ReserveRequest request = next();
				return LeaseModel.this.reporter.timed("reserve", () -> LeaseModel.this.engine.store().reserve(request));
			}

			@Override
			CompletionStage<ReserveResult> lookAsync(Executor executor) {
				ReserveRequest request = next();
				return LeaseModel.this.reporter.timedAsync("reserve",
						() -> LeaseModel.this.engine.store().reserveAsync(request, executor));
			}

			@Override
			@Nullable Decision decide(ReserveResult result) {
				if (result instanceof ReserveResult.Acquired acquired) {
					return acquired(id, operation, this.ownerToken, acquired.takenOver(), this.reserveStart,
							observation);
				}
				return existing(((ReserveResult.Existing) result).record());
			}

		};
	}

	private Decision acquired(RecordId id, String operation, String ownerToken, boolean takenOver, long reserveStart,
			@Nullable Observation observation) {
		Reservation.Lease reservation = new Reservation.Lease(id, ownerToken, operation, takenOver, reserveStart,
				observation);
		this.heartbeat.keepAlive(reservation);
		this.reporter.report(takenOver ? IdempotencyOutcome.TAKEN_OVER : IdempotencyOutcome.EXECUTED, operation, id);
		if (takenOver) {
			logger.info(
					"Took over idempotency key " + id.key() + " for " + operation + " after its owner's lease expired");
		}
		return new Decision.Proceed(reservation);
	}

	/**
	 * A final answer is recorded: 2xx, and 4xx except the statuses a retry may change.
	 */
	@Override
	public boolean records(int status) {
		return IdempotencyEngine.isFinal(status);
	}

	/**
	 * A final answer that fits completes the record, fenced by the owner token; any other
	 * releases it. The answer is always the run's own.
	 */
	@Override
	public Finishing<Answer> succeeded(Reservation reservation, StoredResponse response) {
		Reservation.Lease lease = lease(reservation);
		Answer own = new Answer.Own(response);
		if (!records(response.status())) {
			return release(lease, "status " + response.status() + " is not final", ExecutionResult.RELEASED, own);
		}
		if (response.body().length > this.engine.settings().maxBodyBytes()) {
			return this.engine.bodyTooLarge(lease, response.body().length, own);
		}
		return new Finishing.Complete<Answer>(this.reporter, this.engine.store(), lease, response) {

			@Override
			Answer decide(Boolean completed) {
				if (completed) {
					LeaseModel.this.reporter.finished(ExecutionResult.COMPLETED, lease);
				}
				else {
					ownershipLost(lease, "complete");
				}
				return own;
			}

			@Override
			Answer storeFailed(Exception ex) {
				// The lease runs out (or the store released the record) and a retry runs
				// it: the key is not stuck.
				logger.error("Could not store the response of " + lease
						+ "; a retry runs it again once the record is released or its lease runs out", ex);
				LeaseModel.this.reporter.finished(ExecutionResult.STORE_ERROR, lease);
				return own;
			}

		};
	}

	@Override
	public <A extends @Nullable Object> Finishing<A> notRecorded(Reservation reservation, String reason,
			ExecutionResult result, A value) {
		return release(lease(reservation), reason, result, value);
	}

	/**
	 * Completes the reservation; if another owner took the record over, or the store
	 * failed, the transaction rolls back.
	 */
	@Override
	public Finishing<AtomicOutcome> succeededInTransaction(Reservation reservation, StoredResponse response) {
		Reservation.Lease lease = lease(reservation);
		return new Finishing.Complete<AtomicOutcome>(this.reporter, this.engine.store(), lease, response) {

			@Override
			AtomicOutcome decide(Boolean completed) {
				if (completed) {
					return AtomicOutcome.commit(true);
				}
				logger.warn("Could not complete " + lease + ": another owner took it over; its transaction is rolled"
						+ " back, and another request runs it");
				return AtomicOutcome.refuse(LeaseModel.this.refusals.inFlight(), ExecutionResult.OWNERSHIP_LOST, false);
			}

			@Override
			AtomicOutcome storeFailed(Exception ex) {
				if (TransactionConflictException.isConflict(ex)) {
					logger.info("The database rolled back the transaction of " + lease
							+ " to settle a conflict with another transaction (" + ex.getMessage()
							+ "); nothing of it was done, a retry runs it again");
					return AtomicOutcome.conflict(conflictRefusal(), true);
				}
				logger.error("Could not store the response of " + lease
						+ " in its transaction; the transaction is rolled back and a retry runs it again", ex);
				return AtomicOutcome.refuse(
						LeaseModel.this.refusals.transactionRolledBack("its answer could not be recorded"),
						ExecutionResult.STORE_ERROR, true);
			}

		};
	}

	/**
	 * Releases a record that is still this run's, so that the key is free again at once.
	 */
	@Override
	public Finishing<@Nullable Void> rolledBack(Reservation reservation, AtomicOutcome outcome,
			ExecutionResult result) {
		if (outcome.commits() || outcome.releaseAfterRollback()) {
			return release(lease(reservation), "its transaction did not commit", result, (@Nullable Void) null);
		}
		this.reporter.finished(result, reservation);
		return Finishing.done(null);
	}

	/**
	 * Nothing of the run was done: its record, still its own, is released, and a retry
	 * runs it again (no other attempt of the request can have run: the key was held).
	 */
	@Override
	public AtomicOutcome conflicted(Reservation reservation, AtomicOutcome outcome) {
		rolledBack(reservation, AtomicOutcome.conflict(conflictRefusal(), true), ExecutionResult.RELEASED).finish();
		return AtomicOutcome.refuse(conflictRefusal(), ExecutionResult.RELEASED, false);
	}

	@Override
	public CompletableFuture<AtomicOutcome> conflictedAsync(Reservation reservation, AtomicOutcome outcome,
			Executor executor) {
		return rolledBack(reservation, AtomicOutcome.conflict(conflictRefusal(), true), ExecutionResult.RELEASED)
			.finishAsync(executor)
			.thenApply((released) -> AtomicOutcome.refuse(conflictRefusal(), ExecutionResult.RELEASED, false));
	}

	private IdempotencyError conflictRefusal() {
		return this.refusals
			.transactionRolledBack("the database rolled it back to settle a conflict with another transaction");
	}

	@Override
	public String afterAbandoning() {
		return "its record is taken over by a retry once its lease runs out";
	}

	/**
	 * The step that releases the record and reports {@code result}, or what prevented the
	 * release, then gives {@code value}.
	 */
	private <A extends @Nullable Object> Finishing<A> release(Reservation.Lease reservation, String reason,
			ExecutionResult result, A value) {
		return new Finishing.StoreCall<Boolean, A>(this.reporter, "release") {

			@Override
			Boolean call() {
				return LeaseModel.this.engine.store().release(reservation.id(), reservation.ownerToken());
			}

			@Override
			CompletionStage<Boolean> callAsync(Executor executor) {
				return LeaseModel.this.engine.store()
					.releaseAsync(reservation.id(), reservation.ownerToken(), executor);
			}

			@Override
			A decide(Boolean released) {
				if (released) {
					logger.debug("Released " + reservation + ": " + reason);
					LeaseModel.this.reporter.finished(result, reservation);
				}
				else {
					ownershipLost(reservation, "release");
				}
				return value;
			}

			@Override
			A storeFailed(Exception ex) {
				logger.error("Could not release " + reservation + "; it frees itself when its lease runs out", ex);
				LeaseModel.this.reporter.finished(ExecutionResult.STORE_ERROR, reservation);
				return value;
			}

		};
	}

	private void ownershipLost(Reservation.Lease reservation, String step) {
		logger.warn("Could not " + step + " " + reservation + ": another owner took it over; nothing changed");
		this.reporter.finished(ExecutionResult.OWNERSHIP_LOST, reservation);
	}

	private static Reservation.Lease lease(Reservation reservation) {
		if (reservation instanceof Reservation.Lease lease) {
			return lease;
		}
		throw new IllegalArgumentException(reservation + " was not made by a lease-mode engine");
	}

	/**
	 * A fencing token: unique, never sent to clients, so it needs no secure random (whose
	 * shared lock {@code UUID.randomUUID()} would contend on under load).
	 */
	private static String newOwnerToken() {
		ThreadLocalRandom random = ThreadLocalRandom.current();
		return new java.util.UUID(random.nextLong(), random.nextLong()).toString();
	}

}
