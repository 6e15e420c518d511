package dev.idempotency.autoconfigure.jdbc;

import java.time.Duration;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.autoconfigure.IdempotencyProperties;
import dev.idempotency.autoconfigure.internal.AnswerCompression;
import dev.idempotency.autoconfigure.internal.IdempotencyPurgeScheduler;
import dev.idempotency.autoconfigure.internal.IdempotencyStorePropertyValues;
import dev.idempotency.autoconfigure.internal.IdempotencyStoreTimeout;
import dev.idempotency.core.IdempotencySettings;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.jdbc.JdbcIdempotencyDialect;
import dev.idempotency.store.jdbc.JdbcIdempotencyStore;
import liquibase.integration.spring.SpringLiquibase;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.AnyNestedCondition;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.jdbc.DataSourceBuilder;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.sql.init.dependency.DatabaseInitializationDependencyConfigurer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.util.Assert;

/**
 * Auto-configuration of the JDBC idempotency store, switched on by
 * {@code idempotency.store.type=jdbc}. It picks the store's {@link DataSource} (an
 * {@link IdempotencyDataSource @IdempotencyDataSource} bean, else
 * {@code idempotency.store.jdbc.url}, else the application's), creates the table with the
 * starter's Liquibase changelog when {@code idempotency.store.jdbc.initialize-schema}
 * says so, and purges expired records on a schedule. Every bean backs off when the
 * application defines its own.
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = DataSourceAutoConfiguration.class,
		beforeName = "dev.idempotency.autoconfigure.IdempotencyAutoConfiguration")
@ConditionalOnBooleanProperty(name = "idempotency.enabled", matchIfMissing = true)
@ConditionalOnClass(JdbcClient.class)
@ConditionalOnProperty(prefix = "idempotency.store", name = "type", havingValue = "jdbc")
@Conditional(IdempotencyJdbcStoreAutoConfiguration.OnStoreDataSourceCondition.class)
@EnableConfigurationProperties(IdempotencyJdbcStoreProperties.class)
@Import(DatabaseInitializationDependencyConfigurer.class)
public final class IdempotencyJdbcStoreAutoConfiguration {

	/**
	 * Connection timeout of the dedicated pool unless idempotency.store.jdbc.pool says
	 * otherwise.
	 */
	static final Duration DEDICATED_POOL_CONNECTION_TIMEOUT = Duration.ofSeconds(1);

	@Bean
	@ConditionalOnMissingBean
	IdempotencyJdbcDataSource idempotencyJdbcDataSource(
			@IdempotencyDataSource ObjectProvider<DataSource> dedicatedDataSource,
			ObjectProvider<DataSource> applicationDataSource) {
		DataSource dedicated = dedicatedDataSource.getIfAvailable();
		if (dedicated != null) {
			return new IdempotencyJdbcDataSource(dedicated);
		}
		DataSource application = applicationDataSource.getIfUnique();
		if (application == null) {
			throw new IllegalStateException("The JDBC idempotency store needs one DataSource: mark one "
					+ "@Primary or @IdempotencyDataSource, or set idempotency.store.jdbc.url");
		}
		return new IdempotencyJdbcDataSource(application);
	}

	/**
	 * The store's timeout for the start-up check of the lease: a heartbeat statement may
	 * take up to the query timeout, which JDBC counts in whole seconds, rounded up;
	 * without one it may wait longer than any lease. Declared before the store, whose
	 * condition it shares.
	 */
	@Bean
	@ConditionalOnMissingBean(IdempotencyStore.class)
	IdempotencyStoreTimeout idempotencyJdbcStoreTimeout(IdempotencyJdbcStoreProperties properties) {
		Duration queryTimeout = properties.getQueryTimeout();
		Duration applied = (queryTimeout.isNegative() || queryTimeout.isZero()) ? queryTimeout
				: Duration.ofSeconds((queryTimeout.toNanos() + 999_999_999L) / 1_000_000_000L);
		return new IdempotencyStoreTimeout("idempotency.store.jdbc.query-timeout", applied,
				new IdempotencyJdbcStoreProperties().getQueryTimeout());
	}

	/**
	 * The store's own properties, checked with every other idempotency.* property before
	 * the store is built.
	 */
	@Bean
	@ConditionalOnMissingBean(IdempotencyStore.class)
	IdempotencyStorePropertyValues idempotencyJdbcStorePropertyValues(IdempotencyJdbcStoreProperties properties) {
		return propertyValues(properties, true);
	}

	/**
	 * With a store the application declares, only the purge's properties apply (the purge
	 * runs over a {@link JdbcIdempotencyStore} the application declares too); the store's
	 * own settings, such as the asynchronous commit of reservations, are set in the
	 * application's code.
	 */
	@Bean
	@ConditionalOnBean(IdempotencyStore.class)
	IdempotencyStorePropertyValues idempotencyJdbcDeclaredStorePropertyValues(
			IdempotencyJdbcStoreProperties properties) {
		return propertyValues(properties, false);
	}

	private static IdempotencyStorePropertyValues propertyValues(IdempotencyJdbcStoreProperties properties,
			boolean starterBuildsStore) {
		JdbcIdempotencyDialect dialect = properties.getDialect();
		return new IdempotencyStorePropertyValues.Jdbc(properties.getPurge().isEnabled(),
				properties.getPurge().getInterval(), properties.getPurge().getBatchSize(),
				starterBuildsStore && properties.getPostgresql()
					.getReserveAsynchronousCommit() == JdbcIdempotencyStore.ReserveCommit.ON,
				(dialect != null && dialect != JdbcIdempotencyDialect.POSTGRESQL) ? dialect.name() : null);
	}

	@Bean
	@ConditionalOnMissingBean(IdempotencyStore.class)
	JdbcIdempotencyStore idempotencyStore(IdempotencyJdbcDataSource dataSource,
			IdempotencyJdbcStoreProperties properties,
			ObjectProvider<IdempotencyJdbcSchemaInitializer> schemaInitializer,
			ObjectProvider<DataSource> applicationDataSource, ObjectProvider<IdempotencySettings> settings,
			ObjectProvider<IdempotencyProperties> common) {
		// Every idempotency.* property is checked first, this store's among them, so
		// that all problems are reported at once and before the database is reached.
		settings.getIfAvailable();
		// The table must exist before the first statement: resolving the initializer here
		// makes the store depend on it. Without the table the application does not start.
		IdempotencyJdbcSchemaInitializer initializer = schemaInitializer.getIfAvailable();
		DataSource target = dataSource.getDataSource();
		JdbcIdempotencyDialect dialect = (properties.getDialect() != null) ? properties.getDialect()
				: IdempotencyJdbcDialectDetection.detect(target, properties.getUrl());
		if (initializer != null && initializer.isPending()) {
			// The database did not answer at start-up: the table is set up once it does,
			// and the store answers as unavailable until then.
			target = new IdempotencySchemaPendingDataSource(target, initializer);
		}
		else {
			IdempotencyTableCheck.verify(target, properties.getTableName(),
					(initializer != null) ? initializer.whyNotCreated()
							: "liquibase-core is not on the classpath, so the starter cannot create it");
		}
		JdbcIdempotencyStore.ReserveCommit reserveCommit = properties.getPostgresql().getReserveAsynchronousCommit();
		if (reserveCommit == JdbcIdempotencyStore.ReserveCommit.ON && dialect != JdbcIdempotencyDialect.POSTGRESQL) {
			// The detected dialect: a dialect set by its property was checked with the
			// other properties.
			throw new IllegalStateException("idempotency.store.jdbc.postgresql.reserve-asynchronous-commit=on"
					+ " needs PostgreSQL, but the store's database is " + dialect + ": remove the property");
		}
		// Atomic completion by default where it can be: the records beside the
		// application's own tables, in the application's DataSource.
		Boolean transactionalCompletion = properties.getTransactionalCompletion();
		boolean joins = (transactionalCompletion != null) ? transactionalCompletion
				: target == applicationDataSource.getIfUnique();
		return JdbcIdempotencyStore.builder(target)
			.dialect(dialect)
			.tableName(properties.getTableName())
			.transactionalCompletion(joins)
			.queryTimeout(properties.getQueryTimeout())
			.reserveCommit(reserveCommit)
			.deflateFrom(
					AnswerCompression.deflateFrom(common.getIfAvailable(IdempotencyProperties::new).getStore(), true))
			.build();
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(JdbcIdempotencyStore.class)
	@ConditionalOnBooleanProperty(name = "idempotency.store.jdbc.purge.enabled", matchIfMissing = true)
	IdempotencyPurgeScheduler idempotencyPurgeScheduler(JdbcIdempotencyStore store,
			IdempotencyJdbcStoreProperties properties) {
		return new IdempotencyPurgeScheduler(store, properties.getPurge().getInterval(),
				properties.getPurge().getBatchSize());
	}

	/**
	 * The dedicated pool of {@code idempotency.store.jdbc.url}: a HikariCP pool bound to
	 * {@code idempotency.store.jdbc.pool.*} (a name the pool does not have fails the
	 * start-up). It is not a default candidate, so it never competes with the
	 * application's {@code DataSource} for injection by type, and it is closed with the
	 * context.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(HikariDataSource.class)
	@ConditionalOnProperty(prefix = "idempotency.store.jdbc", name = "url")
	static class DedicatedPoolConfiguration {

		@Bean(defaultCandidate = false)
		@IdempotencyDataSource
		@ConditionalOnMissingBean(annotation = IdempotencyDataSource.class)
		@ConfigurationProperties(prefix = "idempotency.store.jdbc.pool", ignoreUnknownFields = false)
		HikariDataSource idempotencyStoreDataSource(IdempotencyJdbcStoreProperties properties) {
			String url = properties.getUrl();
			Assert.state(url != null, "idempotency.store.jdbc.url is set (the condition of this configuration)");
			HikariDataSource pool = DataSourceBuilder.create(getClass().getClassLoader())
				.type(HikariDataSource.class)
				.url(url)
				.username(properties.getUsername())
				.password(properties.getPassword())
				.build();
			// A store that cannot be reached answers 503 in about a second, not after
			// Hikari's 30 s.
			pool.setConnectionTimeout(DEDICATED_POOL_CONNECTION_TIMEOUT.toMillis());
			pool.setValidationTimeout(DEDICATED_POOL_CONNECTION_TIMEOUT.toMillis() / 2);
			return pool;
		}

	}

	/** Schema set-up with Liquibase, when Liquibase is on the classpath. */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(SpringLiquibase.class)
	static class LiquibaseSchemaConfiguration {

		@Bean
		@ConditionalOnMissingBean
		IdempotencyJdbcSchemaInitializer idempotencyJdbcSchemaInitializer(IdempotencyJdbcDataSource dataSource,
				IdempotencyJdbcStoreProperties properties) {
			new LiquibaseVersionCheck().warnIfNotOpenSource();
			return new IdempotencyJdbcSchemaInitializer(dataSource.getDataSource(), properties.getTableName(),
					properties.getInitializeSchema());
		}

	}

	/**
	 * A data source to use: the application's (or a dedicated bean), or a configured URL.
	 */
	static class OnStoreDataSourceCondition extends AnyNestedCondition {

		OnStoreDataSourceCondition() {
			super(ConfigurationPhase.REGISTER_BEAN);
		}

		@ConditionalOnBean(DataSource.class)
		static class DataSourceBean {

		}

		@ConditionalOnProperty(prefix = "idempotency.store.jdbc", name = "url")
		static class DedicatedUrl {

		}

	}

}
