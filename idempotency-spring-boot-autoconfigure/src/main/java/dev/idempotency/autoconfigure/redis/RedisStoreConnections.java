package dev.idempotency.autoconfigure.redis;

import java.time.Duration;

import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.data.redis.connection.RedisConfiguration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration.LettuceClientConfigurationBuilder;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration.LettuceSslClientConfigurationBuilder;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.util.ClassUtils;

/**
 * The connections the Redis store talks through. With Lettuce (Spring Boot's default
 * client) the store gets a {@link LettuceConnectionFactory} of its own: the same server
 * configuration (standalone, Sentinel or Cluster) and client settings (TLS, credentials,
 * client options and resources, read-from) as the application's, but the store's command
 * timeout. Lettuce's default command timeout is 60 s, which a store call that cannot
 * reach Redis would wait before the request is answered; changing the application's
 * factory instead would change every other Redis call of the application. Any other
 * factory (Jedis, a custom one) is used as it is, with its own timeouts.
 * <p>
 * Deliberately not a {@link RedisConnectionFactory} bean: the application's injection of
 * its factory by type, and Spring Boot's Redis health contributor, stay as they were.
 */
final class RedisStoreConnections implements DisposableBean {

	private static final boolean LETTUCE_PRESENT = ClassUtils.isPresent("io.lettuce.core.RedisClient",
			RedisStoreConnections.class.getClassLoader());

	private final RedisConnectionFactory factory;

	private final @Nullable LettuceConnectionFactory own;

	private final @Nullable Duration commandTimeout;

	RedisStoreConnections(RedisConnectionFactory applicationFactory, @Nullable Duration configuredTimeout) {
		if (LETTUCE_PRESENT && applicationFactory instanceof LettuceConnectionFactory lettuce) {
			this.commandTimeout = commandTimeout(lettuce.getClientConfiguration(), configuredTimeout);
			this.own = new LettuceConnectionFactory(serverConfiguration(lettuce),
					withCommandTimeout(lettuce.getClientConfiguration(), this.commandTimeout));
			this.own.setShareNativeConnection(lettuce.getShareNativeConnection());
			this.own.afterPropertiesSet();
			this.own.start();
			this.factory = this.own;
		}
		else {
			this.commandTimeout = null;
			this.own = null;
			this.factory = applicationFactory;
		}
	}

	/** Where the store's commands go. */
	RedisConnectionFactory factory() {
		return this.factory;
	}

	/**
	 * The store's command timeout, or {@code null} when the application's factory is used
	 * as it is.
	 */
	@Nullable Duration commandTimeout() {
		return this.commandTimeout;
	}

	@Override
	public void destroy() {
		if (this.own != null) {
			this.own.destroy();
		}
	}

	private static Duration commandTimeout(LettuceClientConfiguration application, @Nullable Duration configured) {
		if (configured != null) {
			return configured;
		}
		Duration applicationTimeout = application.getCommandTimeout();
		return (applicationTimeout.compareTo(IdempotencyRedisStoreProperties.DEFAULT_COMMAND_TIMEOUT) < 0)
				? applicationTimeout : IdempotencyRedisStoreProperties.DEFAULT_COMMAND_TIMEOUT;
	}

	private static RedisConfiguration serverConfiguration(LettuceConnectionFactory factory) {
		if (factory.isClusterAware()) {
			return factory.getClusterConfiguration();
		}
		if (factory.isRedisSentinelAware()) {
			return factory.getSentinelConfiguration();
		}
		if (factory.getSocketConfiguration() != null) {
			return factory.getSocketConfiguration();
		}
		return factory.getStandaloneConfiguration();
	}

	/** A copy of the application's client settings with another command timeout. */
	static LettuceClientConfiguration withCommandTimeout(LettuceClientConfiguration application, Duration timeout) {
		LettuceClientConfigurationBuilder builder = LettuceClientConfiguration.builder();
		if (application.isUseSsl()) {
			LettuceSslClientConfigurationBuilder ssl = builder.useSsl().verifyPeer(application.getVerifyMode());
			if (application.isStartTls()) {
				ssl.startTls();
			}
			builder = ssl.and();
		}
		application.getClientResources().ifPresent(builder::clientResources);
		application.getClientOptions().ifPresent(builder::clientOptions);
		application.getClientName().ifPresent(builder::clientName);
		application.getReadFrom().ifPresent(builder::readFrom);
		application.getRedisCredentialsProviderFactory().ifPresent(builder::redisCredentialsProviderFactory);
		return builder.commandTimeout(timeout)
			.shutdownTimeout(application.getShutdownTimeout())
			.shutdownQuietPeriod(application.getShutdownQuietPeriod())
			.build();
	}

}
