package dev.idempotency.autoconfigure.redis;

import java.time.Duration;

import io.lettuce.core.ClientOptions;
import io.lettuce.core.SocketOptions;
import io.lettuce.core.TimeoutOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.metrics.CommandLatencyRecorder;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.tracing.Tracing;
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
 * timeout, and a connect timeout no longer than it. Lettuce's default command timeout is
 * 60 s, and its handshake with a server is bounded by it, which a store call that cannot
 * reach Redis would wait before the request is answered; changing the application's
 * factory instead would change every other Redis call of the application. Any other
 * factory (Jedis, a custom one) is used as it is, with its own timeouts.
 * <p>
 * With Redis Cluster the store's connection also follows topology changes (a replica
 * promoted after its primary failed): when the application's client options refresh the
 * topology neither periodically nor adaptively, and the application did not set Spring
 * Boot's {@code spring.data.redis.lettuce.cluster.refresh.period} or {@code .adaptive}
 * itself, the store's copy refreshes on every adaptive trigger and every
 * {@link #DEFAULT_TOPOLOGY_REFRESH_PERIOD}. Lettuce's default (no refresh) keeps routing
 * a dead primary's slots to it until the application restarts. Refresh settings the
 * application chose (in those properties, in client options of its own) are copied as
 * they are.
 * <p>
 * Deliberately not a {@link RedisConnectionFactory} bean: the application's injection of
 * its factory by type, and Spring Boot's Redis health contributor, stay as they were.
 */
final class RedisStoreConnections implements DisposableBean {

	private static final boolean LETTUCE_PRESENT = ClassUtils.isPresent("io.lettuce.core.RedisClient",
			RedisStoreConnections.class.getClassLoader());

	/**
	 * How often the store's cluster connection reloads the topology when the application
	 * configured no refresh: a failover is followed within this period of the promotion
	 * (adaptive triggers may be quicker), at the cost of one short connection to each
	 * node per period.
	 */
	static final Duration DEFAULT_TOPOLOGY_REFRESH_PERIOD = Duration.ofSeconds(5);

	private final RedisConnectionFactory factory;

	private final @Nullable LettuceConnectionFactory own;

	private final @Nullable Duration commandTimeout;

	/**
	 * The application's client resources without command observation, which the store's
	 * connection uses and {@link #destroy()} shuts down (none of their parts is theirs);
	 * {@code null} when the store's connection uses the application's as they are.
	 */
	private final @Nullable ClientResources unobserved;

	/**
	 * Connections whose commands are observed as the application's are.
	 * @see #RedisStoreConnections(RedisConnectionFactory, Duration, boolean, boolean)
	 */
	RedisStoreConnections(RedisConnectionFactory applicationFactory, @Nullable Duration configuredTimeout,
			boolean clusterRefreshConfigured) {
		this(applicationFactory, configuredTimeout, clusterRefreshConfigured, true);
	}

	/**
	 * @param applicationFactory the application's connection factory
	 * @param configuredTimeout the store's command timeout, if configured
	 * @param clusterRefreshConfigured whether the application set Spring Boot's cluster
	 * topology refresh properties itself: its refresh settings are then copied as they
	 * are
	 * @param observeCommands whether the store's connection keeps the command tracing
	 * (Micrometer observations) and command latency recorder of the application's client
	 * resources; without them it shares the application's event loops and threads all the
	 * same
	 */
	RedisStoreConnections(RedisConnectionFactory applicationFactory, @Nullable Duration configuredTimeout,
			boolean clusterRefreshConfigured, boolean observeCommands) {
		if (LETTUCE_PRESENT && applicationFactory instanceof LettuceConnectionFactory lettuce) {
			this.commandTimeout = commandTimeout(lettuce.getClientConfiguration(), configuredTimeout);
			LettuceClientConfiguration client = withCommandTimeout(lettuce.getClientConfiguration(),
					this.commandTimeout);
			if (lettuce.isClusterAware() && !clusterRefreshConfigured) {
				client = ClusterTopology.following(client);
			}
			ClientResources resources = client.getClientResources().orElse(null);
			if (!observeCommands && resources != null) {
				this.unobserved = unobserved(resources);
				client = copy(client, client.getCommandTimeout()).clientResources(this.unobserved)
					.clientOptions(client.getClientOptions().orElseThrow())
					.build();
			}
			else {
				this.unobserved = null;
			}
			this.own = new LettuceConnectionFactory(serverConfiguration(lettuce), client);
			this.own.setShareNativeConnection(lettuce.getShareNativeConnection());
			this.own.afterPropertiesSet();
			this.own.start();
			this.factory = this.own;
		}
		else {
			this.commandTimeout = null;
			this.own = null;
			this.unobserved = null;
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
		if (this.unobserved != null) {
			this.unobserved.shutdown();
		}

	}

	/**
	 * The application's client resources without command tracing and latency recorder.
	 * Everything else is the application's own instance (event loops, executor, timer,
	 * event bus, resolvers), so these start no thread of their own. The event loops,
	 * executor and timer are given again after {@code mutate()}, which copies the event
	 * loops not at all and the others with the application's ownership of them: given,
	 * they are shared, so that shutting these down leaves them running.
	 */
	private static ClientResources unobserved(ClientResources application) {
		return application.mutate()
			.eventLoopGroupProvider(application.eventLoopGroupProvider())
			.eventExecutorGroup(application.eventExecutorGroup())
			.timer(application.timer())
			.tracing(Tracing.disabled())
			.commandLatencyRecorder(CommandLatencyRecorder.disabled())
			.build();
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
		// Each is null unless the factory is configured for it.
		if (factory.getClusterConfiguration() != null) {
			return factory.getClusterConfiguration();
		}
		if (factory.getSentinelConfiguration() != null) {
			return factory.getSentinelConfiguration();
		}
		if (factory.getSocketConfiguration() != null) {
			return factory.getSocketConfiguration();
		}
		return factory.getStandaloneConfiguration();
	}

	/**
	 * A copy of the application's client settings with another command timeout, and a
	 * connect timeout no longer than it.
	 */
	static LettuceClientConfiguration withCommandTimeout(LettuceClientConfiguration application, Duration timeout) {
		LettuceClientConfigurationBuilder builder = copy(application, timeout);
		// Spring Data Redis's default when none are set
		ClientOptions options = application.getClientOptions()
			.orElseGet(() -> ClientOptions.builder().timeoutOptions(TimeoutOptions.enabled()).build());
		return builder.clientOptions(connectingWithin(options, timeout)).build();
	}

	/**
	 * The client options, with a connect timeout of at most {@code timeout} (the
	 * application's when shorter). Opening a connection takes up to the connect timeout
	 * (TCP; Lettuce's default is 10 s) and then the handshake, which Lettuce bounds by
	 * the command timeout; with Redis Cluster the first connection also loads the
	 * topology, one connection to each node, each bounded so. The store's callers wait
	 * for an opening at most the command timeout whatever it takes: this keeps the
	 * opening itself, which later callers join, near that too.
	 */
	static ClientOptions connectingWithin(ClientOptions options, Duration timeout) {
		SocketOptions socket = options.getSocketOptions();
		// zero: no command timeout, nothing to bound the opening by
		if (timeout.isZero() || timeout.isNegative() || socket.getConnectTimeout().compareTo(timeout) <= 0) {
			return options;
		}
		// mutate() of ClusterClientOptions builds ClusterClientOptions
		return options.mutate().socketOptions(socket.mutate().connectTimeout(timeout).build()).build();
	}

	/** The application's client settings but its client options, in a builder. */
	private static LettuceClientConfigurationBuilder copy(LettuceClientConfiguration application, Duration timeout) {
		LettuceClientConfigurationBuilder builder = LettuceClientConfiguration.builder();
		if (application.isUseSsl()) {
			LettuceSslClientConfigurationBuilder ssl = builder.useSsl().verifyPeer(application.getVerifyMode());
			if (application.isStartTls()) {
				ssl.startTls();
			}
			builder = ssl.and();
		}
		application.getClientResources().ifPresent(builder::clientResources);
		application.getClientName().ifPresent(builder::clientName);
		application.getReadFrom().ifPresent(builder::readFrom);
		application.getRedisCredentialsProviderFactory().ifPresent(builder::redisCredentialsProviderFactory);
		return builder.commandTimeout(timeout)
			.shutdownTimeout(application.getShutdownTimeout())
			.shutdownQuietPeriod(application.getShutdownQuietPeriod());
	}

	/**
	 * Topology refresh for the store's cluster connection; a class of its own so that
	 * Lettuce's cluster types are loaded only when Lettuce is there.
	 */
	static final class ClusterTopology {

		private ClusterTopology() {
		}

		/**
		 * The store's client settings, with topology refresh (periodic and on every
		 * adaptive trigger) unless the client options already refresh the topology in
		 * some way.
		 */
		static LettuceClientConfiguration following(LettuceClientConfiguration client) {
			ClientOptions options = client.getClientOptions().orElse(null);
			ClusterClientOptions cluster = (options instanceof ClusterClientOptions clusterOptions) ? clusterOptions
					: (options != null) ? ClusterClientOptions.builder(options).build() : ClusterClientOptions.create();
			ClusterTopologyRefreshOptions refresh = cluster.getTopologyRefreshOptions();
			if (refresh.isPeriodicRefreshEnabled() || !refresh.getAdaptiveRefreshTriggers().isEmpty()) {
				return client;
			}
			ClusterTopologyRefreshOptions following = ClusterTopologyRefreshOptions.builder()
				.enableAllAdaptiveRefreshTriggers()
				.adaptiveRefreshTriggersTimeout(refresh.getAdaptiveRefreshTimeout())
				.refreshTriggersReconnectAttempts(refresh.getRefreshTriggersReconnectAttempts())
				.enablePeriodicRefresh(DEFAULT_TOPOLOGY_REFRESH_PERIOD)
				.dynamicRefreshSources(refresh.useDynamicRefreshSources())
				.closeStaleConnections(refresh.isCloseStaleConnections())
				.build();
			return copy(client, client.getCommandTimeout())
				.clientOptions(cluster.mutate().topologyRefreshOptions(following).build())
				.build();
		}

	}

}
