package dev.idempotency.store.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.function.Supplier;

import javax.sql.DataSource;

import dev.idempotency.store.IdempotencyStoreException;
import dev.idempotency.store.TransactionConflictException;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.jdbc.BadSqlGrammarException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionException;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * How the JDBC store's statements run: on connections that carry the store's network
 * timeout while it holds them, with a JDBC query timeout after it; alone in auto-commit,
 * in a short transaction of the store's own, or on the connection of the caller's
 * transaction; and their failures as {@link IdempotencyStoreException}s that name a
 * missing table.
 */
final class JdbcStatementRunner {

	/**
	 * How much later than the network timeout the JDBC query timeout fires. The network
	 * timeout must come first: PostgreSQL's driver cancels a statement over a new
	 * connection, and when the network drops everything the statement then waits for that
	 * cancel request to time out (10 s by default) after its own read has timed out.
	 */
	private static final Duration QUERY_TIMEOUT_AFTER_NETWORK_TIMEOUT = Duration.ofSeconds(1);

	private final DataSource dataSource;

	/**
	 * Where the store's connections come from: {@link #dataSource} with a network timeout
	 * on each connection while the store holds it, or {@code null} without a query
	 * timeout.
	 */
	private final @Nullable NetworkTimeoutDataSource timedDataSource;

	private final String table;

	private final JdbcClient jdbc;

	private final NamedParameterJdbcTemplate namedJdbc;

	private final TransactionTemplate ownTransaction;

	/**
	 * Whether the pool's connections are in auto-commit; {@code null} until first
	 * checked.
	 */
	private volatile @Nullable Boolean autoCommitPool;

	JdbcStatementRunner(DataSource dataSource, String table, Duration queryTimeout) {
		this.dataSource = dataSource;
		this.table = table;
		int querySeconds = querySeconds(queryTimeout);
		this.timedDataSource = (querySeconds > 0)
				? new NetworkTimeoutDataSource(dataSource, Math.toIntExact(Math.max(1, queryTimeout.toMillis())))
				: null;
		DataSource connections = (this.timedDataSource != null) ? this.timedDataSource : dataSource;
		JdbcTemplate template = new JdbcTemplate(connections);
		template.setQueryTimeout(querySeconds);
		this.namedJdbc = new NamedParameterJdbcTemplate(template);
		this.jdbc = JdbcClient.create(this.namedJdbc);
		this.ownTransaction = new TransactionTemplate(new DataSourceTransactionManager(connections));
		this.ownTransaction.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
	}

	/** The client whose statements run on the store's connections. */
	JdbcClient jdbc() {
		return this.jdbc;
	}

	/**
	 * The same statements' template, for a statement that runs on the
	 * {@code PreparedStatement} itself.
	 */
	NamedParameterJdbcTemplate namedJdbc() {
		return this.namedJdbc;
	}

	/** Whether a Spring transaction is active on the store's data source right now. */
	boolean callerTransactionActive() {
		return TransactionSynchronizationManager.isActualTransactionActive()
				&& TransactionSynchronizationManager.hasResource(this.dataSource);
	}

	/**
	 * Runs work on the connection of the caller's transaction, with the store's network
	 * timeout for the time of the work.
	 */
	<T extends @Nullable Object> T onCallerConnection(Supplier<T> work) {
		return (this.timedDataSource != null) ? this.timedDataSource.onBoundConnection(work) : work.get();
	}

	/**
	 * Runs work that is one statement, atomic on its own: alone in auto-commit when that
	 * cannot join a caller's transaction, else in a transaction of its own.
	 */
	<T extends @Nullable Object> T oneStatement(String action, Supplier<T> statement) {
		if (TransactionSynchronizationManager.isSynchronizationActive()
				|| TransactionSynchronizationManager.hasResource(this.dataSource) || !autoCommitPool()) {
			// A transaction (or a connection bound to this thread) would be joined:
			// suspend it instead.
			return inOwnTransaction(action, statement);
		}
		try {
			return statement.get();
		}
		catch (DataAccessException ex) {
			throw failure(action, ex);
		}
	}

	private boolean autoCommitPool() {
		Boolean autoCommit = this.autoCommitPool;
		if (autoCommit == null) {
			try (Connection connection = ((this.timedDataSource != null) ? this.timedDataSource : this.dataSource)
				.getConnection()) {
				autoCommit = connection.getAutoCommit();
			}
			catch (SQLException ex) {
				throw new IdempotencyStoreException("Idempotency store cannot reach its database", ex);
			}
			this.autoCommitPool = autoCommit;
		}
		return autoCommit;
	}

	<T extends @Nullable Object> T inOwnTransaction(String action, Supplier<T> work) {
		try {
			return this.ownTransaction.execute((status) -> work.get());
		}
		catch (DataAccessException | TransactionException ex) {
			throw failure(action, ex);
		}
	}

	/**
	 * The store's failure; a missing table is named, so the health detail says what is
	 * wrong; a transaction the database rolled back to settle a conflict is a
	 * {@link TransactionConflictException}.
	 */
	IdempotencyStoreException failure(String action, RuntimeException ex) {
		if (TransactionConflictException.isConflict(ex)) {
			return new TransactionConflictException("Idempotency store failed to " + action
					+ ": the database rolled its transaction back to settle a conflict with another one", ex);
		}
		String problem = (ex instanceof BadSqlGrammarException)
				? ": table " + this.table + " not found (or not the starter's schema)" : "";
		return new IdempotencyStoreException("Idempotency store failed to " + action + problem, ex);
	}

	/** The JDBC query timeout: zero, or after the network timeout. */
	private static int querySeconds(Duration timeout) {
		if (timeout.isZero()) {
			return 0;
		}
		return Math.toIntExact(timeout.plus(QUERY_TIMEOUT_AFTER_NETWORK_TIMEOUT).plusNanos(999_999_999).getSeconds());
	}

}
