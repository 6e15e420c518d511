package dev.idempotency.store.jdbc;

import java.sql.Connection;
import java.sql.SQLException;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;
import org.postgresql.core.BaseConnection;
import org.postgresql.core.TransactionState;

import org.springframework.jdbc.datasource.ConnectionHolder;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Whether the transaction bound to a {@link DataSource} has sent nothing yet.
 * PostgreSQL's driver sends {@code BEGIN} with a transaction's first statement and
 * nothing at all for a transaction that ran none, so it knows
 * ({@link TransactionState#IDLE}). Only while nothing but JDBC connections is bound to
 * the thread: a JPA, Hibernate or MyBatis session bound beside them may hold writes that
 * it sends only when it flushes, at the commit, so there an empty connection does not
 * mean an empty transaction. Only loaded when the driver is on the class path.
 */
final class EmptyTransactions {

	private EmptyTransactions() {
	}

	/**
	 * Whether the transaction of {@code dataSource} on this thread has sent nothing yet;
	 * {@code false} when it cannot tell (another driver, another resource bound).
	 * @throws SQLException if the connection cannot be asked
	 */
	static boolean isEmpty(DataSource dataSource) throws SQLException {
		return onlyConnectionsBound() && transactionState(dataSource) == TransactionState.IDLE;
	}

	/**
	 * Whether the transaction of {@code dataSource} on this thread may be committed by a
	 * statement of the store ({@link CommittingWrites}): only JDBC connections are bound,
	 * no transaction synchronization is registered (one could write, or check, before the
	 * commit), and the connection is PostgreSQL's driver's, in a transaction that has not
	 * failed.
	 * @throws SQLException if the connection cannot be asked
	 */
	static boolean canCommitWithStatement(DataSource dataSource) throws SQLException {
		if (!TransactionSynchronizationManager.isSynchronizationActive()
				|| !TransactionSynchronizationManager.getSynchronizations().isEmpty() || !onlyConnectionsBound()) {
			return false;
		}
		TransactionState state = transactionState(dataSource);
		return state != null && state != TransactionState.FAILED;
	}

	/**
	 * The state PostgreSQL's driver knows of the transaction on the connection of
	 * {@code dataSource} bound to this thread; {@code null} for a connection of another
	 * driver or in auto-commit.
	 */
	private static @Nullable TransactionState transactionState(DataSource dataSource) throws SQLException {
		Connection connection = DataSourceUtils.getConnection(dataSource);
		try {
			return (connection.isWrapperFor(BaseConnection.class) && !connection.getAutoCommit())
					? connection.unwrap(BaseConnection.class).getTransactionState() : null;
		}
		finally {
			DataSourceUtils.releaseConnection(connection, dataSource);
		}
	}

	private static boolean onlyConnectionsBound() {
		for (Object resource : TransactionSynchronizationManager.getResourceMap().values()) {
			if (!(resource instanceof ConnectionHolder)) {
				return false;
			}
		}
		return true;
	}

}
