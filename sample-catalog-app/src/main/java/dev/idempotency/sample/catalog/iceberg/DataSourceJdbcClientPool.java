package dev.idempotency.sample.catalog.iceberg;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Map;

import javax.sql.DataSource;

import org.apache.iceberg.jdbc.JdbcClientPool;
import org.apache.iceberg.jdbc.UncheckedSQLException;

/**
 * Lets Iceberg's {@code JdbcCatalog} borrow its connections from the application's
 * {@link DataSource} (and its pool and credentials) instead of opening its own through the
 * {@code DriverManager}.
 */
class DataSourceJdbcClientPool extends JdbcClientPool {

	private final DataSource dataSource;

	DataSourceJdbcClientPool(DataSource dataSource, String url, Map<String, String> properties) {
		super(url, properties);
		this.dataSource = dataSource;
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
