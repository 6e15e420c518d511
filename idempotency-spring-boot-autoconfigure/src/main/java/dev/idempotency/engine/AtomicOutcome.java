package dev.idempotency.engine;

import org.jspecify.annotations.Nullable;

import dev.idempotency.store.StoredResponse;

/**
 * What becomes of a run whose answer was recorded inside the transaction of its own
 * writes (atomic completion, {@link IdempotencyEngine#succeededInTransaction}): commit
 * that transaction and answer with the run's own response, or roll it back and answer
 * with the response another attempt recorded (as a replay) or with an error. Once the
 * transaction has ended, the front door hands this back to
 * {@link IdempotencyEngine#transactionEnded}.
 */
public final class AtomicOutcome {

	private final boolean commit;

	private final @Nullable StoredResponse replay;

	private final @Nullable IdempotencyError error;

	private final ExecutionResult result;

	private final boolean releaseAfterRollback;

	private AtomicOutcome(boolean commit, @Nullable StoredResponse replay, @Nullable IdempotencyError error,
			ExecutionResult result, boolean releaseAfterRollback) {
		this.commit = commit;
		this.replay = replay;
		this.error = error;
		this.result = result;
		this.releaseAfterRollback = releaseAfterRollback;
	}

	static AtomicOutcome commit(boolean releaseAfterRollback) {
		return new AtomicOutcome(true, null, null, ExecutionResult.COMPLETED, releaseAfterRollback);
	}

	static AtomicOutcome replay(StoredResponse recorded) {
		return new AtomicOutcome(false, recorded, null, ExecutionResult.ANSWERED_RECORDED, false);
	}

	static AtomicOutcome refuse(IdempotencyError error, ExecutionResult result, boolean releaseAfterRollback) {
		return new AtomicOutcome(false, null, error, result, releaseAfterRollback);
	}

	/**
	 * Whether the transaction commits: the record is written in it. Otherwise it must
	 * roll back, taking the run's own writes with it.
	 */
	public boolean commits() {
		return this.commit;
	}

	/**
	 * After a rollback: the response another attempt of the same request recorded, to
	 * answer as a replay; {@code null} when the answer is {@link #error()}.
	 */
	public @Nullable StoredResponse replay() {
		return this.replay;
	}

	/**
	 * After a rollback: the error to answer with (the key reused by another request, a
	 * run in flight elsewhere, the store failing); {@code null} when the answer is
	 * {@link #replay()} or the transaction commits.
	 */
	public @Nullable IdempotencyError error() {
		return this.error;
	}

	ExecutionResult result() {
		return this.result;
	}

	/**
	 * Whether a lease-mode record is to be released if the transaction did not commit.
	 */
	boolean releaseAfterRollback() {
		return this.releaseAfterRollback;
	}

}
