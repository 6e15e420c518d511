package dev.idempotency.autoconfigure.jdbc;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;

import javax.sql.DataSource;

import org.springframework.core.InfrastructureProxy;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.transaction.support.TransactionSynchronizationUtils;

/**
 * The store's {@link DataSource} while its schema set-up waits for a database that could
 * not be reached at start-up: no connection is handed out (the store answers as
 * unavailable, the health indicator reports it down) until the starter's changelog has
 * been applied, which each refused connection starts in the background. Once set up,
 * connections pass through. The same resource as the {@code DataSource} it wraps for
 * transaction synchronization ({@link InfrastructureProxy}).
 */
final class IdempotencySchemaPendingDataSource extends DelegatingDataSource implements InfrastructureProxy {

	private final IdempotencyJdbcSchemaInitializer initializer;

	IdempotencySchemaPendingDataSource(DataSource target, IdempotencyJdbcSchemaInitializer initializer) {
		super(target);
		this.initializer = initializer;
	}

	@Override
	public Connection getConnection() throws SQLException {
		checkSetUp();
		return super.getConnection();
	}

	@Override
	public Connection getConnection(String username, String password) throws SQLException {
		checkSetUp();
		return super.getConnection(username, password);
	}

	@Override
	public Object getWrappedObject() {
		return TransactionSynchronizationUtils.unwrapResourceIfNecessary(obtainTargetDataSource());
	}

	private void checkSetUp() throws SQLException {
		if (this.initializer.isPending()) {
			this.initializer.initializeInBackground();
			throw new SQLTransientConnectionException("The idempotency store's table is not set up yet: its database"
					+ " could not be reached at start-up; it is set up in the background once the database answers");
		}
	}

}
