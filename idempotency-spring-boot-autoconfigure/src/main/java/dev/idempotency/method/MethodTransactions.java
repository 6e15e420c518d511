package dev.idempotency.method;

import dev.idempotency.core.internal.Answer;
import dev.idempotency.core.internal.IdempotencyEngine;
import dev.idempotency.core.internal.Reservation;
import dev.idempotency.store.StoredResponse;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.transaction.NoTransactionException;
import org.springframework.transaction.interceptor.TransactionInterceptor;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.util.ClassUtils;

/**
 * The caller's transaction around a protected method, when spring-tx is present:
 * completes a result only after that transaction committed, and marks it rollback-only
 * when another call recorded first.
 */
final class MethodTransactions {

	/** The method door's logger, which users already configure. */
	private static final Log logger = LogFactory.getLog(IdempotentMethodInterceptor.class);

	private static final boolean PRESENT = ClassUtils.isPresent(
			"org.springframework.transaction.support.TransactionSynchronizationManager",
			MethodTransactions.class.getClassLoader());

	private final IdempotencyEngine engine;

	MethodTransactions(IdempotencyEngine engine) {
		this.engine = engine;
	}

	/**
	 * Inside a caller's transaction that the store does not join, the result must not be
	 * recorded before that transaction commits: a rollback, or a crash before the commit,
	 * would leave a record answering for writes that never happened. Then the completion
	 * is registered to run after the commit, and the reservation is released if the
	 * transaction does not commit.
	 * @return whether the completion was deferred (else complete now)
	 */
	boolean completeAfterCommit(Reservation reservation, StoredResponse stored, String operation) {
		return PRESENT && Spring.completeAfterCommit(this.engine, reservation, stored, operation);
	}

	/**
	 * Another call of the same request recorded its result first: this call's own writes
	 * in the caller's transaction must not commit.
	 */
	void markRollbackOnly(String operation) {
		if (PRESENT) {
			Spring.markRollbackOnly(operation);
		}
	}

	/** Kept apart so that nothing of spring-tx is loaded when it is absent. */
	private static final class Spring {

		static boolean completeAfterCommit(IdempotencyEngine engine, Reservation reservation, StoredResponse stored,
				String operation) {
			if (!TransactionSynchronizationManager.isSynchronizationActive()
					|| !TransactionSynchronizationManager.isActualTransactionActive()
					|| engine.joinsCurrentTransaction()) {
				return false;
			}
			TransactionSynchronizationManager.registerSynchronization(new TransactionSynchronization() {

				@Override
				public void afterCommit() {
					if (engine.succeeded(reservation, stored) instanceof Answer.Recorded) {
						logger.info("Another call of " + operation + " with the same key recorded its result"
								+ " first; this call's transaction had already committed");
					}
				}

				@Override
				public void afterCompletion(int status) {
					if (status != STATUS_COMMITTED) {
						engine.failed(reservation, "the transaction around " + operation + " did not commit");
					}
				}

			});
			return true;
		}

		static void markRollbackOnly(String operation) {
			if (!TransactionSynchronizationManager.isActualTransactionActive()) {
				return;
			}
			try {
				TransactionInterceptor.currentTransactionStatus().setRollbackOnly();
				logger.info("Marked the transaction around " + operation
						+ " rollback-only: another call of the same request recorded its result first");
			}
			catch (NoTransactionException ex) {
				logger.warn("Another call of " + operation + " with the same key recorded its result first, but the"
						+ " active transaction is not managed by a TransactionInterceptor (@Transactional), so it"
						+ " could not be marked rollback-only: this call's own writes in it may commit");
			}
		}

	}

}
