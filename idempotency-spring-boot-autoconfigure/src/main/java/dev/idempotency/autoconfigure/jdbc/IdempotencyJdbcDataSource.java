package dev.idempotency.autoconfigure.jdbc;

import javax.sql.DataSource;

/**
 * The {@link DataSource} the JDBC idempotency store uses: an
 * {@link IdempotencyDataSource @IdempotencyDataSource} bean (the dedicated pool of
 * {@code idempotency.store.jdbc.url} is one), else the application's. Held apart from the
 * application's {@code DataSource} beans so that it never competes with them for
 * injection by type. Its life cycle belongs to the bean it came from.
 *
 * @since 0.1.0
 */
public final class IdempotencyJdbcDataSource {

	private final DataSource dataSource;

	public IdempotencyJdbcDataSource(DataSource dataSource) {
		this.dataSource = dataSource;
	}

	public DataSource getDataSource() {
		return this.dataSource;
	}

}
