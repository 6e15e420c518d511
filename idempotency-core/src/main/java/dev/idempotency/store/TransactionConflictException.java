package dev.idempotency.store;

/**
 * The database ended the transaction a store call ran in to settle a conflict with
 * another transaction (a deadlock, a serialization failure: SQLState class 40): nothing
 * of that transaction was done. The store is not at fault; with atomic completion the
 * other transaction may be another attempt of the same request, whose recorded answer is
 * then this one's too.
 *
 * @since 0.1.0
 */
public class TransactionConflictException extends IdempotencyStoreException {

	public TransactionConflictException(String message, Throwable cause) {
		super(message, cause);
	}

	/**
	 * Whether {@code failure}, or a cause of it, is the database settling a conflict
	 * between transactions: SQLState class 40 (transaction rollback: deadlock,
	 * serialization failure), except {@code 40003} (statement completion unknown).
	 * @param failure what a call failed with
	 * @return whether it is such a conflict
	 */
	public static boolean isConflict(Throwable failure) {
		Throwable cause = failure;
		for (int depth = 0; cause != null && depth < 32; depth++, cause = cause.getCause()) {
			if (cause instanceof TransactionConflictException || (cause instanceof java.sql.SQLException sql
					&& sql.getSQLState() != null && sql.getSQLState().startsWith("40")
					// 40003: statement completion unknown, which says nothing was
					// done no more than it says it was
					&& !sql.getSQLState().equals("40003"))) {
				return true;
			}
		}
		return false;
	}

}
