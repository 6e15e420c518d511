package dev.idempotency.core.internal;

import dev.idempotency.core.ExecutionResult;
import dev.idempotency.core.IdempotencyError;
import dev.idempotency.store.StoredResponse;

/**
 * What becomes of a run whose answer was recorded inside the transaction of its own
 * writes (atomic completion, {@link IdempotencyEngine#succeededInTransaction}):
 * {@link Commit} that transaction and answer with the run's own response, or roll it back
 * and answer with the response another attempt recorded ({@link Replay}) or with an error
 * ({@link Refuse}). Once the transaction has ended, the front door hands this back to
 * {@link IdempotencyEngine#transactionEnded}.
 *
 * @since 0.1.0
 */
public abstract sealed class AtomicOutcome permits AtomicOutcome.Commit, AtomicOutcome.Replay, AtomicOutcome.Refuse {

	private final ExecutionResult result;

	private final boolean releaseAfterRollback;

	private AtomicOutcome(ExecutionResult result, boolean releaseAfterRollback) {
		this.result = result;
		this.releaseAfterRollback = releaseAfterRollback;
	}

	static AtomicOutcome commit(boolean releaseAfterRollback) {
		return new Commit(releaseAfterRollback);
	}

	static AtomicOutcome replay(StoredResponse recorded) {
		return new Replay(recorded);
	}

	static AtomicOutcome refuse(IdempotencyError error, ExecutionResult result, boolean releaseAfterRollback) {
		return new Refuse(error, result, releaseAfterRollback, false);
	}

	/**
	 * The database rolled the transaction back to settle a conflict with another one
	 * while the record was written in it: the front door asks
	 * {@link IdempotencyEngine#transactionConflicted} for the answer once it has ended.
	 */
	static AtomicOutcome conflict(IdempotencyError error, boolean releaseAfterRollback) {
		return new Refuse(error, ExecutionResult.NOT_RECORDED, releaseAfterRollback, true);
	}

	/**
	 * Whether the transaction commits: the record is written in it. Otherwise it must
	 * roll back, taking the run's own writes with it.
	 */
	public boolean commits() {
		return this instanceof Commit;
	}

	ExecutionResult result() {
		return this.result;
	}

	/**
	 * Whether the database rolled the transaction back to settle a conflict with another
	 * one (SQLState class 40) as the record was written: then
	 * {@link IdempotencyEngine#transactionConflicted} gives the answer once the
	 * transaction has ended.
	 */
	public boolean conflicted() {
		return (this instanceof Refuse refuse) && refuse.conflicted;
	}

	/**
	 * Whether a lease-mode record is to be released if the transaction did not commit.
	 */
	boolean releaseAfterRollback() {
		return this.releaseAfterRollback;
	}

	/**
	 * The record is written in the transaction: commit it and answer with the run's own
	 * response (if the commit fails, nothing was done: answer
	 * {@link IdempotencyEngine#transactionRolledBack}).
	 */
	public static final class Commit extends AtomicOutcome {

		private Commit(boolean releaseAfterRollback) {
			super(ExecutionResult.COMPLETED, releaseAfterRollback);
		}

	}

	/**
	 * Another attempt of the same request recorded its response first: roll back and
	 * answer with that response, as a replay.
	 */
	public static final class Replay extends AtomicOutcome {

		private final StoredResponse response;

		private Replay(StoredResponse response) {
			super(ExecutionResult.ANSWERED_RECORDED, false);
			this.response = response;
		}

		/** The response another attempt of the same request recorded. */
		public StoredResponse response() {
			return this.response;
		}

	}

	/**
	 * Roll back and answer with an error: the key reused by another request, a run in
	 * flight elsewhere, the store failing.
	 */
	public static final class Refuse extends AtomicOutcome {

		private final IdempotencyError error;

		private final boolean conflicted;

		private Refuse(IdempotencyError error, ExecutionResult result, boolean releaseAfterRollback,
				boolean conflicted) {
			super(result, releaseAfterRollback);
			this.error = error;
			this.conflicted = conflicted;
		}

		/** The error to answer with. */
		public IdempotencyError error() {
			return this.error;
		}

	}

}
