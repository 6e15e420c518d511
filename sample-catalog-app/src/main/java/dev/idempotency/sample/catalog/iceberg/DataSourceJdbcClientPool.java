package dev.idempotency.sample.catalog.iceberg;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Map;

import javax.sql.DataSource;

import org.apache.iceberg.jdbc.JdbcClientPool;
import org.apache.iceberg.jdbc.UncheckedSQLException;
import org.jspecify.annotations.Nullable;

import org.springframework.jdbc.CannotGetJdbcConnectionException;
import org.springframework.jdbc.datasource.DataSourceUtils;

/**
 * Lets Iceberg's {@code JdbcCatalog} borrow its connections from the application's
 * {@link DataSource} (and its pool and credentials) instead of opening its own through
 * the {@code DriverManager}.
 * <p>
 * Each action borrows a connection and gives it back at once. Iceberg's own pool would
 * keep a borrowed connection for good: once the database link broke (a restart, a network
 * cut) while it was in use, the application's pool closes it, and every later catalog
 * call failed with "Connection is closed" until the application restarted, since Iceberg
 * reconnects only on {@code SQLNonTransientConnectionException}. The application's pool
 * checks a connection before lending it and replaces broken ones.
 * <p>
 * Connections are taken through Spring's {@link DataSourceUtils}: inside a Spring
 * transaction on this {@link DataSource} every catalog statement runs on the
 * transaction's connection and commits or rolls back with it (with whatever else the
 * transaction wrote, such as an idempotency record on the same database); outside one,
 * each action gets a connection of its own in auto-commit, as before. Iceberg's
 * {@code JdbcCatalog} never calls {@code commit}, {@code rollback} or
 * {@code setAutoCommit} (checked in iceberg-core 1.12.0): it issues plain statements and
 * relies on auto-commit, so the transaction, when there is one, is the caller's alone.
 */
class DataSourceJdbcClientPool extends JdbcClientPool {

	private final DataSource dataSource;

	DataSourceJdbcClientPool(DataSource dataSource, @Nullable String url, Map<String, String> properties) {
		super(url, properties);
		this.dataSource = dataSource;
	}

	@Override
	public <R> R run(Action<R, Connection, SQLException> action) throws SQLException, InterruptedException {
		return run(action, false);
	}

	@Override
	public <R> R run(Action<R, Connection, SQLException> action, boolean retry)
			throws SQLException, InterruptedException {
		Connection connection = connection();
		try {
			return action.run(connection);
		}
		finally {
			DataSourceUtils.releaseConnection(connection, this.dataSource);
		}
	}

	/**
	 * The transaction's connection, or a new one; a failure to get one surfaces as the
	 * {@link SQLException} Iceberg reports as a connection failure.
	 */
	private Connection connection() throws SQLException {
		try {
			return DataSourceUtils.getConnection(this.dataSource);
		}
		catch (CannotGetJdbcConnectionException ex) {
			if (ex.getCause() instanceof SQLException cause) {
				throw cause;
			}
			throw ex;
		}
	}

	@Override
	protected Connection newClient() {
		try {
			return this.dataSource.getConnection();
		}
		catch (SQLException ex) {
			throw new UncheckedSQLException(ex, "Cannot get a connection for the catalog");
		}
	}

	@Override
	protected Connection reconnect(Connection client) {
		close(client);
		return newClient();
	}

	@Override
	protected void close(Connection client) {
		try {
			client.close();
		}
		catch (SQLException ex) {
			throw new UncheckedSQLException(ex, "Cannot close a catalog connection");
		}
	}

}
