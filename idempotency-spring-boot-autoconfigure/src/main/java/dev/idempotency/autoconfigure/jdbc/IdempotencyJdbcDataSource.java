package dev.idempotency.autoconfigure.jdbc;

import javax.sql.DataSource;

import org.springframework.beans.factory.DisposableBean;

/**
 * The {@link DataSource} the JDBC idempotency store uses, held apart from the application's
 * {@code DataSource} beans so that a dedicated one (built from {@code idempotency.store.jdbc.url})
 * never competes with them for injection by type. A data source built here is closed with the
 * context; one that came from a bean is left to its owner.
 */
public final class IdempotencyJdbcDataSource implements DisposableBean {

	private final DataSource dataSource;

	private final boolean owned;

	private IdempotencyJdbcDataSource(DataSource dataSource, boolean owned) {
		this.dataSource = dataSource;
		this.owned = owned;
	}

	/** Uses a data source whose life cycle belongs to someone else (a bean). */
	public static IdempotencyJdbcDataSource of(DataSource dataSource) {
		return new IdempotencyJdbcDataSource(dataSource, false);
	}

	/** Uses a data source created for the store, closed when the context closes. */
	public static IdempotencyJdbcDataSource owned(DataSource dataSource) {
		return new IdempotencyJdbcDataSource(dataSource, true);
	}

	public DataSource getDataSource() {
		return this.dataSource;
	}

	@Override
	public void destroy() throws Exception {
		if (this.owned && this.dataSource instanceof AutoCloseable closeable) {
			closeable.close();
		}
	}

}
