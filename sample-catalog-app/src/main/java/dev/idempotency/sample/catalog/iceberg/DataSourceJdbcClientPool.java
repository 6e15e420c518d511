package dev.idempotency.sample.catalog.iceberg;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Map;

import javax.sql.DataSource;

import org.apache.iceberg.jdbc.JdbcClientPool;
import org.apache.iceberg.jdbc.UncheckedSQLException;

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
 */
class DataSourceJdbcClientPool extends JdbcClientPool {

	private final DataSource dataSource;

	DataSourceJdbcClientPool(DataSource dataSource, String url, Map<String, String> properties) {
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
		try (Connection connection = this.dataSource.getConnection()) {
			return action.run(connection);
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
