package dev.idempotency.autoconfigure.internal;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * The configured store's own property values that {@code IdempotencyPropertiesValidator}
 * checks with every other idempotency.* property, so that all problems are reported at
 * once. A bean of the JDBC, R2DBC and Redis store auto-configurations, made from their
 * properties; the in-memory store's properties are the core auto-configuration's own.
 *
 * @since 0.2.0
 */
public sealed interface IdempotencyStorePropertyValues {

	/**
	 * The JDBC store's.
	 *
	 * @param purgeEnabled {@code idempotency.store.jdbc.purge.enabled}
	 * @param purgeInterval {@code idempotency.store.jdbc.purge.interval}
	 * @param purgeBatchSize {@code idempotency.store.jdbc.purge.batch-size}
	 * @param reserveAsynchronousCommitOn whether
	 * {@code idempotency.store.jdbc.postgresql.reserve-asynchronous-commit} is {@code on}
	 * @param otherDialect {@code idempotency.store.jdbc.dialect} when it is set to a
	 * database other than PostgreSQL, else {@code null} (a detected dialect is checked
	 * once the database told it)
	 */
	record Jdbc(boolean purgeEnabled, @Nullable Duration purgeInterval, int purgeBatchSize,
			boolean reserveAsynchronousCommitOn,
			@Nullable String otherDialect) implements IdempotencyStorePropertyValues {

	}

	/**
	 * The R2DBC store's, when the starter builds the store.
	 *
	 * @param tableName {@code idempotency.store.r2dbc.table-name}
	 * @param purgeEnabled {@code idempotency.store.r2dbc.purge.enabled}
	 * @param purgeInterval {@code idempotency.store.r2dbc.purge.interval}
	 * @param purgeBatchSize {@code idempotency.store.r2dbc.purge.batch-size}
	 */
	record R2dbc(@Nullable String tableName, boolean purgeEnabled, @Nullable Duration purgeInterval,
			int purgeBatchSize) implements IdempotencyStorePropertyValues {

	}

	/**
	 * The Redis store's, when the starter builds the store.
	 *
	 * @param replicasToAck {@code idempotency.store.redis.replicas-to-ack}
	 * @param replicasAckTimeout {@code idempotency.store.redis.replicas-ack-timeout}
	 */
	record Redis(int replicasToAck, @Nullable Duration replicasAckTimeout) implements IdempotencyStorePropertyValues {

	}

}
