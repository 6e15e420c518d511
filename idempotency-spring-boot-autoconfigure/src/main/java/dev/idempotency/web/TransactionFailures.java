package dev.idempotency.web;

import java.sql.SQLException;
import java.sql.SQLNonTransientConnectionException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTimeoutException;
import java.sql.SQLTransientConnectionException;
import java.util.Set;

import io.r2dbc.spi.R2dbcException;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.dao.RecoverableDataAccessException;
import org.springframework.dao.TransientDataAccessResourceException;
import org.springframework.util.ClassUtils;

/**
 * What a failed commit of a door's transaction was, for both doors' atomic completion
 * ({@link HandlerTransactions}, {@link ReactiveHandlerTransactions}).
 */
final class TransactionFailures {

	private static final Set<String> STORE_SQL_STATE_CLASSES = Set.of("08", "53", "57", "58", "XX");

	private static final boolean R2DBC_PRESENT = ClassUtils.isPresent("io.r2dbc.spi.R2dbcException",
			TransactionFailures.class.getClassLoader());

	private TransactionFailures() {
	}

	/**
	 * Whether a commit failed because the database or the connection to it failed: the
	 * store's failure, a {@code 503} to retry later. The door's own statements succeeded
	 * before the commit, so any other failure of it is the application's own: a check of
	 * its writes deferred to the commit (a constraint, SQLState class 23; a trigger), or
	 * writes a session sends only then (JPA without a flush), which fail alike on every
	 * retry. The database's: Spring's resource failures (timeouts included), JDBC's
	 * connection, recoverable and timeout exceptions, and the SQLState classes 08
	 * (connection), 53 (insufficient resources), 57 (operator intervention), 58 (system
	 * error) and XX (internal error), through JDBC or R2DBC.
	 */
	static boolean isStoreFailure(Throwable failure) {
		Throwable cause = failure;
		for (int depth = 0; cause != null && depth < 32; depth++, cause = cause.getCause()) {
			if (cause instanceof DataAccessResourceFailureException
					|| cause instanceof TransientDataAccessResourceException || cause instanceof QueryTimeoutException
					|| cause instanceof RecoverableDataAccessException
					|| cause instanceof SQLTransientConnectionException
					|| cause instanceof SQLNonTransientConnectionException || cause instanceof SQLRecoverableException
					|| cause instanceof SQLTimeoutException) {
				return true;
			}
			String sqlState = (cause instanceof SQLException sql) ? sql.getSQLState()
					: R2DBC_PRESENT ? R2dbcStates.sqlState(cause) : null;
			if (sqlState != null && sqlState.length() >= 2
					&& STORE_SQL_STATE_CLASSES.contains(sqlState.substring(0, 2))) {
				return true;
			}
		}
		return false;
	}

	/** Loaded only when R2DBC is on the class path. */
	private static final class R2dbcStates {

		static @Nullable String sqlState(Throwable failure) {
			return (failure instanceof R2dbcException r2dbc) ? r2dbc.getSqlState() : null;
		}

	}

}
