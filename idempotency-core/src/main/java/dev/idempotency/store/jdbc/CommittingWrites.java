package dev.idempotency.store.jdbc;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTimeoutException;
import java.sql.SQLTransientConnectionException;
import java.util.Set;

import dev.idempotency.store.TransactionConflictException;

import org.springframework.dao.DataAccessException;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.dao.RecoverableDataAccessException;
import org.springframework.dao.TransientDataAccessResourceException;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;
import org.springframework.jdbc.core.namedparam.SqlParameterSource;
import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * The last write of a caller's transaction sent with that transaction's {@code COMMIT},
 * in one round trip, on PostgreSQL
 * ({@link JdbcIdempotencyStore#lastInJoinedTransaction}). PostgreSQL's driver sends the
 * statements of one statement string together, ended by one {@code Sync}, and it knows
 * from the server's answer that the transaction has ended: the caller's
 * {@code Connection.commit()} then sends nothing.
 * <p>
 * The write is wrapped so that changing no row fails:
 * {@code WITH written AS (<write> RETURNING 1) SELECT 1 / COUNT(*) FROM written; COMMIT}.
 * A failed statement makes the server skip the rest of what was sent up to the
 * {@code Sync}, so a write that changed nothing ({@value #NOTHING_WRITTEN}, division by
 * zero) never lets the {@code COMMIT} run: the transaction is left aborted and the caller
 * rolls it back, as it does when the write changed nothing on its own.
 * <p>
 * What failed, the write or the commit, is not told apart by the driver, so a failure is
 * judged by its kind: a conflict with another transaction (SQLState class 40) and a
 * failure of the database or of its connection are the write's, as they would be; any
 * other failure can only be the commit's, a check of the caller's own writes deferred to
 * the commit (a constraint, a trigger): the transaction has ended without committing, and
 * the caller's commit throws it (a synchronization registered for it fails
 * {@code beforeCommit}), as if that commit had failed. The caller's commit then rolls
 * back, which has nothing to send either.
 */
final class CommittingWrites {

	/** The SQLState of the division by zero that says the write changed no row. */
	static final String NOTHING_WRITTEN = "22012";

	private static final Set<String> DATABASE_SQL_STATE_CLASSES = Set.of("08", "53", "55", "57", "58", "XX");

	private CommittingWrites() {
	}

	/**
	 * {@code write}, an {@code UPDATE} or {@code INSERT} of one row without a
	 * {@code RETURNING} clause, followed by {@code COMMIT}; it fails when it changes no
	 * row.
	 */
	static String committing(String write) {
		return "WITH written AS (" + write.strip() + "\nRETURNING 1)\nSELECT 1 / COUNT(*) FROM written;\nCOMMIT";
	}

	/**
	 * Runs a {@link #committing} statement on the connection of the caller's transaction.
	 * @return whether it wrote its row: then the transaction has committed, or its commit
	 * failed with the caller's own error, which the caller's commit throws; if not, the
	 * transaction is aborted and must be rolled back
	 * @throws DataAccessException a conflict with another transaction, or a failure of
	 * the database: nothing was committed
	 */
	static boolean run(NamedParameterJdbcTemplate jdbc, String sql, SqlParameterSource parameters) {
		try {
			jdbc.execute(sql, parameters, PreparedStatement::execute);
			return true;
		}
		catch (DataAccessException ex) {
			if (NOTHING_WRITTEN.equals(sqlState(ex))) {
				return false;
			}
			if (TransactionConflictException.isConflict(ex) || isDatabaseFailure(ex)) {
				throw ex;
			}
			TransactionSynchronizationManager.registerSynchronization(new FailedCommit(ex));
			return true;
		}
	}

	private static String sqlState(Throwable failure) {
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			if (cause instanceof SQLException sql && sql.getSQLState() != null) {
				return sql.getSQLState();
			}
		}
		return "";
	}

	/**
	 * Whether the database or the connection to it failed (Spring's resource failures and
	 * timeouts; JDBC's connection, recoverable and timeout exceptions; SQLState classes
	 * 08, 53, 55, 57, 58, XX), or the failure carries no SQLState to judge it by.
	 */
	private static boolean isDatabaseFailure(DataAccessException failure) {
		if (failure instanceof DataAccessResourceFailureException
				|| failure instanceof TransientDataAccessResourceException || failure instanceof QueryTimeoutException
				|| failure instanceof RecoverableDataAccessException) {
			return true;
		}
		for (Throwable cause = failure.getCause(); cause != null; cause = cause.getCause()) {
			if (cause instanceof SQLTransientConnectionException || cause instanceof SQLNonTransientConnectionException
					|| cause instanceof SQLRecoverableException || cause instanceof SQLTimeoutException) {
				return true;
			}
		}
		String state = sqlState(failure);
		return state.length() < 2 || DATABASE_SQL_STATE_CLASSES.contains(state.substring(0, 2));
	}

	/**
	 * Fails the caller's commit with what failed the commit sent with the write, so that
	 * the caller answers it as a failed commit.
	 */
	private record FailedCommit(DataAccessException failure) implements TransactionSynchronization {

		@Override
		public void beforeCommit(boolean readOnly) {
			throw this.failure;
		}

	}

}
