package dev.idempotency.autoconfigure.jdbc;

import java.time.Duration;

import javax.sql.DataSource;

import dev.idempotency.autoconfigure.internal.IdempotencyPurgeScheduler;
import dev.idempotency.store.IdempotencyStore;

import org.springframework.boot.sql.init.DatabaseInitializationMode;

/**
 * For tests in other packages: the JDBC store's schema set-up and purge run as the
 * auto-configuration runs them, through its package-private
 * {@link IdempotencyJdbcSchemaInitializer} and {@link IdempotencyPurgeScheduler}.
 */
public final class JdbcStoreTestSupport {

	/** Liquibase's record of the change sets the starter's changelog applied. */
	public static final String CHANGELOG_TABLE = IdempotencyJdbcSchemaInitializer.CHANGELOG_TABLE;

	private JdbcStoreTestSupport() {
	}

	/**
	 * Applies the starter's changelog for this table ({@code initialize-schema=always}).
	 * @return whether the changelog was applied (the database answered)
	 */
	public static boolean createSchema(DataSource dataSource, String tableName) throws Exception {
		return new IdempotencyJdbcSchemaInitializer(dataSource, tableName, DatabaseInitializationMode.ALWAYS)
			.initializeSchema();
	}

	/**
	 * One run of the purge scheduler: batches until one comes back short.
	 * @return how many records were deleted
	 */
	public static int purgeOnce(IdempotencyStore store, int batchSize) {
		return new IdempotencyPurgeScheduler(store, Duration.ofMinutes(1), batchSize).purge();
	}

}
