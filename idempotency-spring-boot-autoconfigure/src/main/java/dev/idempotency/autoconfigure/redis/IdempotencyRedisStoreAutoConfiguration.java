package dev.idempotency.autoconfigure.redis;

import java.time.Duration;

import dev.idempotency.autoconfigure.IdempotencyProperties;
import dev.idempotency.autoconfigure.internal.AnswerCompression;
import dev.idempotency.autoconfigure.internal.IdempotencyStorePropertyValues;
import dev.idempotency.autoconfigure.internal.IdempotencyStoreTimeout;
import dev.idempotency.core.IdempotencySettings;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.redis.RedisIdempotencyStore;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.DependsOn;
import org.springframework.core.env.Environment;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * Auto-configuration of the Redis idempotency store: with
 * {@code idempotency.store.type=redis} and a {@link RedisConnectionFactory} (usually
 * Spring Boot's, configured by {@code spring.data.redis.*}), contributes a
 * {@link RedisIdempotencyStore} unless the application defines its own
 * {@link IdempotencyStore}. With Lettuce the store talks through its own connection with
 * a short command timeout and, with Redis Cluster, topology refresh
 * ({@link RedisStoreConnections}). Before the store exists, Redis's eviction settings are
 * checked ({@link RedisEvictionPolicyCheck}). Runs before the core auto-configuration so
 * that the engine finds the store.
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = DataRedisAutoConfiguration.class,
		beforeName = "dev.idempotency.autoconfigure.IdempotencyAutoConfiguration")
@ConditionalOnBooleanProperty(name = "idempotency.enabled", matchIfMissing = true)
@ConditionalOnClass(RedisConnectionFactory.class)
@ConditionalOnProperty(prefix = "idempotency.store", name = "type", havingValue = "redis")
@ConditionalOnBean(RedisConnectionFactory.class)
@EnableConfigurationProperties(IdempotencyRedisStoreProperties.class)
public final class IdempotencyRedisStoreAutoConfiguration {

	private static final String CLUSTER_REFRESH = "spring.data.redis.lettuce.cluster.refresh";

	@Bean
	@ConditionalOnMissingBean(IdempotencyStore.class)
	RedisStoreConnections idempotencyRedisStoreConnections(RedisConnectionFactory redisConnectionFactory,
			IdempotencyRedisStoreProperties properties, Environment environment) {
		return new RedisStoreConnections(redisConnectionFactory, properties.getCommandTimeout(),
				clusterRefreshConfigured(environment), properties.isObserveCommands());
	}

	/**
	 * Whether the application set Spring Boot's cluster topology refresh itself (even to
	 * its defaults): the store's connection then refreshes as the application's does.
	 */
	private static boolean clusterRefreshConfigured(Environment environment) {
		Binder binder = Binder.get(environment);
		return binder.bind(CLUSTER_REFRESH + ".period", Duration.class).isBound()
				|| binder.bind(CLUSTER_REFRESH + ".adaptive", Boolean.class).isBound();
	}

	/**
	 * Whether Redis may evict the records, checked before the store exists: one
	 * {@code CONFIG GET} through the store's connection unless
	 * {@code idempotency.store.redis.eviction-check=off}.
	 */
	@Bean
	@ConditionalOnMissingBean(IdempotencyStore.class)
	RedisEvictionPolicyCheck idempotencyRedisEvictionPolicyCheck(RedisStoreConnections idempotencyRedisStoreConnections,
			IdempotencyRedisStoreProperties properties) {
		return new RedisEvictionPolicyCheck(idempotencyRedisStoreConnections.factory(), properties.getEvictionCheck());
	}

	/**
	 * The store's timeout for the start-up check of the lease: a heartbeat waits up to
	 * the store's command timeout (set, or derived). None to check when the store uses
	 * the application's factory as it is (not Lettuce).
	 */
	@Bean
	@ConditionalOnBean(RedisStoreConnections.class)
	@Nullable IdempotencyStoreTimeout idempotencyRedisStoreTimeout(RedisStoreConnections idempotencyRedisStoreConnections) {
		Duration commandTimeout = idempotencyRedisStoreConnections.commandTimeout();
		return (commandTimeout != null) ? new IdempotencyStoreTimeout("idempotency.store.redis.command-timeout",
				commandTimeout, IdempotencyRedisStoreProperties.DEFAULT_COMMAND_TIMEOUT) : null;
	}

	/**
	 * The store's own properties, checked with every other idempotency.* property before
	 * the store is built.
	 */
	@Bean
	@ConditionalOnMissingBean(IdempotencyStore.class)
	IdempotencyStorePropertyValues idempotencyRedisStorePropertyValues(IdempotencyRedisStoreProperties properties) {
		return new IdempotencyStorePropertyValues.Redis(properties.getReplicasToAck(),
				properties.getReplicasAckTimeout());
	}

	@Bean
	@ConditionalOnMissingBean(IdempotencyStore.class)
	@DependsOn("idempotencyRedisEvictionPolicyCheck")
	RedisIdempotencyStore redisIdempotencyStore(RedisStoreConnections idempotencyRedisStoreConnections,
			IdempotencyRedisStoreProperties properties, ObjectProvider<IdempotencySettings> settings,
			ObjectProvider<IdempotencyProperties> common) {
		// Every idempotency.* property is checked first, this store's among them, so
		// that all problems are reported at once.
		settings.getIfAvailable();
		return RedisIdempotencyStore.builder(idempotencyRedisStoreConnections.factory(), properties.getKeyPrefix())
			.replicasToAck(properties.getReplicasToAck())
			.replicasAckTimeout(properties.getReplicasAckTimeout())
			.deflateFrom(
					AnswerCompression.deflateFrom(common.getIfAvailable(IdempotencyProperties::new).getStore(), false))
			.build();
	}

}
