package dev.idempotency.autoconfigure.jdbc;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariConfigMXBean;
import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.store.jdbc.JdbcIdempotencyDialect;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.jdbc.DataSourceUnwrapper;
import org.springframework.boot.jdbc.DatabaseDriver;
import org.springframework.util.ClassUtils;

/**
 * The store's dialect when {@code idempotency.store.jdbc.dialect} is not set: from the
 * database, or, when it cannot be reached at start-up, from the JDBC URL (the dedicated
 * pool's, or that of the application's HikariCP pool), so that the application starts
 * during a database outage.
 */
final class IdempotencyJdbcDialectDetection {

	private IdempotencyJdbcDialectDetection() {
	}

	static JdbcIdempotencyDialect detect(DataSource dataSource, @Nullable String dedicatedUrl) {
		try {
			return JdbcIdempotencyDialect.detect(dataSource);
		}
		catch (IllegalStateException ex) {
			if (ex.getCause() == null) {
				throw ex; // reached, and not a database the store supports
			}
			String url = (dedicatedUrl != null) ? dedicatedUrl : hikariUrl(dataSource);
			JdbcIdempotencyDialect fromUrl = (url != null) ? fromUrl(url) : null;
			if (fromUrl == null) {
				throw new IllegalStateException("Cannot detect the idempotency store's database: it cannot be"
						+ " reached and its JDBC URL is not known; set idempotency.store.jdbc.dialect (POSTGRESQL,"
						+ " MARIADB or H2) so that the application starts while the database is down", ex);
			}
			return fromUrl;
		}
	}

	private static @Nullable JdbcIdempotencyDialect fromUrl(String url) {
		return switch (DatabaseDriver.fromJdbcUrl(url)) {
			case POSTGRESQL -> JdbcIdempotencyDialect.POSTGRESQL;
			case MARIADB, MYSQL -> JdbcIdempotencyDialect.MARIADB;
			case H2 -> JdbcIdempotencyDialect.H2;
			default -> null;
		};
	}

	private static @Nullable String hikariUrl(DataSource dataSource) {
		if (!ClassUtils.isPresent("com.zaxxer.hikari.HikariDataSource",
				IdempotencyJdbcDialectDetection.class.getClassLoader())) {
			return null;
		}
		HikariDataSource hikari = DataSourceUnwrapper.unwrap(dataSource, HikariConfigMXBean.class,
				HikariDataSource.class);
		return (hikari != null) ? hikari.getJdbcUrl() : null;
	}

}
