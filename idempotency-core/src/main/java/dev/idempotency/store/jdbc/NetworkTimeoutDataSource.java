package dev.idempotency.store.jdbc;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

import javax.sql.DataSource;

import org.jspecify.annotations.Nullable;

import org.springframework.core.InfrastructureProxy;
import org.springframework.jdbc.CannotGetJdbcConnectionException;
import org.springframework.jdbc.datasource.ConnectionProxy;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.jdbc.datasource.DelegatingDataSource;
import org.springframework.transaction.support.TransactionSynchronizationUtils;

/**
 * The store's view of its {@link DataSource}: every connection it hands out carries a
 * network timeout ({@link Connection#setNetworkTimeout}) while the store holds it, and
 * gets its previous one back when the store releases it. A query timeout is carried out
 * by the server: when the network drops everything, the server never reads the statement,
 * nothing cancels it, and the call would wait for the operating system to give the
 * connection up. The network timeout ends it. Set per connection and restored, so that a
 * {@code DataSource} shared with the application keeps the application's settings on its
 * own work.
 * <p>
 * For transaction synchronization this is the same resource as the {@code DataSource} it
 * wraps ({@link InfrastructureProxy}): a transaction bound to either is seen by both.
 */
final class NetworkTimeoutDataSource extends DelegatingDataSource implements InfrastructureProxy {

	/**
	 * Runs the driver's timeout work on the calling thread; the drivers the store
	 * supports set a socket timeout and need no thread.
	 */
	private static final Executor CALLING_THREAD = Runnable::run;

	private final int millis;

	NetworkTimeoutDataSource(DataSource target, int millis) {
		super(target);
		this.millis = millis;
	}

	@Override
	public Connection getConnection() throws SQLException {
		return withTimeout(obtainTargetDataSource().getConnection());
	}

	@Override
	public Connection getConnection(String username, String password) throws SQLException {
		return withTimeout(obtainTargetDataSource().getConnection(username, password));
	}

	@Override
	public Object getWrappedObject() {
		return TransactionSynchronizationUtils.unwrapResourceIfNecessary(obtainTargetDataSource());
	}

	/**
	 * Runs work on the connection of a caller's transaction that is bound to this data
	 * source, with the network timeout set for the time of the work only.
	 */
	<T extends @Nullable Object> T onBoundConnection(Supplier<T> work) {
		Connection connection = DataSourceUtils.getConnection(this);
		try {
			int previous;
			try {
				previous = connection.getNetworkTimeout();
				connection.setNetworkTimeout(CALLING_THREAD, this.millis);
			}
			catch (SQLFeatureNotSupportedException ex) {
				return work.get();
			}
			catch (SQLException ex) {
				throw new CannotGetJdbcConnectionException("Cannot set the network timeout of the connection", ex);
			}
			try {
				return work.get();
			}
			finally {
				restore(connection, previous);
			}
		}
		finally {
			DataSourceUtils.releaseConnection(connection, this);
		}
	}

	private Connection withTimeout(Connection connection) throws SQLException {
		int previous;
		try {
			previous = connection.getNetworkTimeout();
			connection.setNetworkTimeout(CALLING_THREAD, this.millis);
		}
		catch (SQLFeatureNotSupportedException ex) {
			return connection;
		}
		catch (SQLException ex) {
			connection.close();
			throw ex;
		}
		return (Connection) Proxy.newProxyInstance(ConnectionProxy.class.getClassLoader(),
				new Class<?>[] { ConnectionProxy.class }, (proxy, method, args) -> {
					switch (method.getName()) {
						case "close" -> {
							restore(connection, previous);
							connection.close();
							return null;
						}
						case "getTargetConnection" -> {
							return connection;
						}
						case "equals" -> {
							return proxy == args[0];
						}
						case "hashCode" -> {
							return System.identityHashCode(proxy);
						}
						case "toString" -> {
							return "Connection with a network timeout of " + this.millis + " ms: " + connection;
						}
						case "unwrap" -> {
							if (((Class<?>) args[0]).isInstance(proxy)) {
								return proxy;
							}
						}
						case "isWrapperFor" -> {
							if (((Class<?>) args[0]).isInstance(proxy)) {
								return true;
							}
						}
						default -> {
						}
					}
					try {
						return method.invoke(connection, args);
					}
					catch (InvocationTargetException ex) {
						throw ex.getTargetException();
					}
				});
	}

	/**
	 * Gives the connection its previous timeout back; a broken connection is left to its
	 * pool.
	 */
	private static void restore(Connection connection, int previous) {
		try {
			connection.setNetworkTimeout(CALLING_THREAD, previous);
		}
		catch (SQLException ex) {
			// closed or broken: the pool discards it
		}
	}

}
