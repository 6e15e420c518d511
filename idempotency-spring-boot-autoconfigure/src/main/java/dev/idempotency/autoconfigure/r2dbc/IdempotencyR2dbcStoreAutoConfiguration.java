package dev.idempotency.autoconfigure.r2dbc;

import java.time.Duration;

import dev.idempotency.autoconfigure.IdempotencyProperties;
import dev.idempotency.autoconfigure.internal.AnswerCompression;
import dev.idempotency.autoconfigure.internal.IdempotencyPurgeScheduler;
import dev.idempotency.autoconfigure.internal.IdempotencyStorePropertyValues;
import dev.idempotency.autoconfigure.internal.IdempotencyStoreTimeout;
import dev.idempotency.core.IdempotencySettings;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.jdbc.JdbcIdempotencyDialect;
import dev.idempotency.store.jdbc.JdbcIdempotencyStore;
import dev.idempotency.store.r2dbc.R2dbcIdempotencyStore;
import io.r2dbc.spi.ConnectionFactory;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.r2dbc.autoconfigure.R2dbcAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.r2dbc.core.DatabaseClient;

/**
 * Auto-configuration of the R2DBC idempotency store: with
 * {@code idempotency.store.type=r2dbc} and a {@link ConnectionFactory} (usually Spring
 * Boot's, configured by {@code spring.r2dbc.*}), contributes an
 * {@link R2dbcIdempotencyStore} on it unless the application defines its own
 * {@link IdempotencyStore}. The dialect is detected from the driver. At start-up the
 * table is created when {@code idempotency.store.r2dbc.initialize-schema} says so (an
 * embedded database by default), and the application does not start without it (a
 * database that cannot be reached at start-up does not stop it: the table is then set up
 * before the store's first connection once the database answers); expired records are
 * purged on a schedule. Runs before the core auto-configuration so that the engine finds
 * the store.
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = R2dbcAutoConfiguration.class,
		beforeName = "dev.idempotency.autoconfigure.IdempotencyAutoConfiguration")
@ConditionalOnBooleanProperty(name = "idempotency.enabled", matchIfMissing = true)
@ConditionalOnClass({ ConnectionFactory.class, DatabaseClient.class })
@ConditionalOnProperty(prefix = "idempotency.store", name = "type", havingValue = "r2dbc")
@ConditionalOnBean(ConnectionFactory.class)
@EnableConfigurationProperties(IdempotencyR2dbcStoreProperties.class)
public final class IdempotencyR2dbcStoreAutoConfiguration {

	private static final Log logger = LogFactory.getLog(IdempotencyR2dbcStoreAutoConfiguration.class);

	/**
	 * How long the start-up waits for a first connection before it goes on without one.
	 */
	private static final Duration REACHABLE_WITHIN = Duration.ofSeconds(10);

	/**
	 * The store's timeout for the start-up check of the lease: a heartbeat waits up to
	 * the store's timeout.
	 */
	@Bean
	@ConditionalOnMissingBean(IdempotencyStore.class)
	IdempotencyStoreTimeout idempotencyR2dbcStoreTimeout(IdempotencyR2dbcStoreProperties properties) {
		return new IdempotencyStoreTimeout("idempotency.store.r2dbc.timeout", properties.getTimeout(),
				new IdempotencyR2dbcStoreProperties().getTimeout());
	}

	/**
	 * The store's own properties, checked with every other idempotency.* property before
	 * the store is built.
	 */
	@Bean
	@ConditionalOnMissingBean(IdempotencyStore.class)
	IdempotencyStorePropertyValues idempotencyR2dbcStorePropertyValues(IdempotencyR2dbcStoreProperties properties) {
		return new IdempotencyStorePropertyValues.R2dbc(properties.getTableName(), properties.getPurge().isEnabled(),
				properties.getPurge().getInterval(), properties.getPurge().getBatchSize());
	}

	@Bean
	@ConditionalOnMissingBean(IdempotencyStore.class)
	R2dbcIdempotencyStore r2dbcIdempotencyStore(ConnectionFactory connectionFactory,
			IdempotencyR2dbcStoreProperties properties, ObjectProvider<IdempotencySettings> settings,
			ObjectProvider<IdempotencyProperties> common) {
		// Every idempotency.* property is checked first, so that all problems are
		// reported at once and before the database is reached.
		settings.getIfAvailable();
		JdbcIdempotencyDialect dialect = R2dbcIdempotencyStore.detect(connectionFactory);
		JdbcIdempotencyStore.ReserveCommit reserveCommit = properties.getPostgresql().getReserveAsynchronousCommit();
		if (reserveCommit == JdbcIdempotencyStore.ReserveCommit.ON && dialect != JdbcIdempotencyDialect.POSTGRESQL) {
			throw new IllegalStateException("idempotency.store.r2dbc.postgresql.reserve-asynchronous-commit=on"
					+ " needs PostgreSQL, but the store's database is " + dialect + ": remove the property");
		}
		IdempotencyR2dbcSchema schema = new IdempotencyR2dbcSchema(connectionFactory, dialect,
				properties.getTableName(), properties.getInitializeSchema());
		ConnectionFactory storeConnections = connectionFactory;
		if (schema.reachable(REACHABLE_WITHIN)) {
			schema.prepare();
		}
		else {
			// As the JDBC store: the application starts, keyed requests are answered as
			// for an unavailable store, and the table is set up once the database
			// answers.
			logger.warn("The idempotency store's database cannot be reached: its table '" + properties.getTableName()
					+ "' will be set up before the store's first connection once it answers; until then keyed"
					+ " requests are answered as for an unavailable store");
			storeConnections = new IdempotencySchemaPendingConnectionFactory(connectionFactory, schema);
		}
		return R2dbcIdempotencyStore.builder(storeConnections)
			.dialect(dialect)
			.tableName(properties.getTableName())
			.timeout(properties.getTimeout())
			.reserveCommit(reserveCommit)
			.deflateFrom(
					AnswerCompression.deflateFrom(common.getIfAvailable(IdempotencyProperties::new).getStore(), true))
			.build();
	}

	/**
	 * Deletes expired records on a schedule ({@code idempotency.store.r2dbc.purge.*}), on
	 * a thread of its own.
	 */
	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(R2dbcIdempotencyStore.class)
	@ConditionalOnBooleanProperty(name = "idempotency.store.r2dbc.purge.enabled", matchIfMissing = true)
	IdempotencyPurgeScheduler idempotencyR2dbcPurgeScheduler(R2dbcIdempotencyStore store,
			IdempotencyR2dbcStoreProperties properties) {
		return new IdempotencyPurgeScheduler(store, properties.getPurge().getInterval(),
				properties.getPurge().getBatchSize());
	}

}
