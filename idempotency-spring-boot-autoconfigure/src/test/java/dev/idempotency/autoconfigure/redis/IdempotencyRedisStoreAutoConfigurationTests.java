package dev.idempotency.autoconfigure.redis;

import java.time.Clock;
import java.time.Duration;
import java.util.UUID;

import dev.idempotency.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempotency.autoconfigure.InvalidIdempotencySettingsException;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.IdempotencyStoreException;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.ReserveRequest;
import dev.idempotency.store.ReserveResult;
import dev.idempotency.store.memory.InMemoryIdempotencyStore;
import dev.idempotency.store.redis.RedisIdempotencyStore;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions.RefreshTrigger;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.tracing.MicrometerTracing;
import io.micrometer.observation.ObservationRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.annotation.ImportCandidates;
import org.springframework.boot.data.redis.autoconfigure.ClientResourcesBuilderCustomizer;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.LettuceClientOptionsBuilderCustomizer;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Which store beans {@link IdempotencyRedisStoreAutoConfiguration} contributes, with
 * Spring Boot's own Redis auto-configuration providing the connection factory (to
 * 127.0.0.1:6379, Boot's default).
 */
class IdempotencyRedisStoreAutoConfigurationTests {

	/** A cluster nobody connects to: the connections are opened on first use only. */
	private static final String CLUSTER_NODES = "spring.data.redis.cluster.nodes=127.0.0.1:1";

	private final ApplicationContextRunner contextRunner = new ApplicationContextRunner().withConfiguration(
			AutoConfigurations.of(IdempotencyRedisStoreAutoConfiguration.class, DataRedisAutoConfiguration.class));

	@Test
	void storeIsCreatedWithTypeRedisAndARedisConnectionFactory() {
		this.contextRunner.withPropertyValues("idempotency.store.type=redis").run((context) -> {
			assertThat(context).hasSingleBean(IdempotencyStore.class);
			assertThat(context).hasSingleBean(RedisIdempotencyStore.class);
			assertThat(context.getBean(RedisIdempotencyStore.class).keyPrefix()).isEqualTo("idempotency:");
		});
	}

	@Test
	void theConfiguredStoreTalksToRedisUnderTheConfiguredPrefix() {
		String prefix = "idem-test-" + UUID.randomUUID() + ":";
		this.contextRunner
			.withPropertyValues("idempotency.store.type=redis", "idempotency.store.redis.key-prefix=" + prefix)
			.run((context) -> {
				RedisIdempotencyStore store = context.getBean(RedisIdempotencyStore.class);
				assertThat(store.keyPrefix()).isEqualTo(prefix);
				RecordId id = new RecordId("autoconfigure-test", UUID.randomUUID().toString());
				String owner = UUID.randomUUID().toString();
				assertThat(store
					.reserve(new ReserveRequest(id, "fp", "op", owner, Duration.ofMinutes(1), Duration.ofMinutes(2))))
					.isEqualTo(new ReserveResult.Acquired(false));
				// release deletes the only key this test wrote
				assertThat(store.release(id, owner)).isTrue();
				assertThat(store.find(id)).isEmpty();
			});
	}

	@Test
	void theStoreHasItsOwnShortCommandTimeoutAndTheApplicationsFactoryIsUnchanged() {
		this.contextRunner.withPropertyValues("idempotency.store.type=redis").run((context) -> {
			assertThat(context).hasSingleBean(RedisConnectionFactory.class);
			LettuceConnectionFactory application = context.getBean(LettuceConnectionFactory.class);
			assertThat(application.getClientConfiguration().getCommandTimeout()).isEqualTo(Duration.ofSeconds(60));
			RedisStoreConnections connections = context.getBean(RedisStoreConnections.class);
			assertThat(connections.factory()).isNotSameAs(application);
			assertThat(connections.commandTimeout()).isEqualTo(Duration.ofSeconds(2));
		});
	}

	@Test
	void aShorterApplicationTimeoutIsKeptAndAConfiguredOneWins() {
		this.contextRunner.withPropertyValues("idempotency.store.type=redis", "spring.data.redis.timeout=500ms")
			.run((context) -> assertThat(context.getBean(RedisStoreConnections.class).commandTimeout())
				.isEqualTo(Duration.ofMillis(500)));
		this.contextRunner
			.withPropertyValues("idempotency.store.type=redis", "spring.data.redis.timeout=500ms",
					"idempotency.store.redis.command-timeout=5s")
			.run((context) -> assertThat(context.getBean(RedisStoreConnections.class).commandTimeout())
				.isEqualTo(Duration.ofSeconds(5)));
	}

	@Test
	void theStoresCommandsAreNotObservedUnlessAskedWhileTheApplicationsStillAre() {
		ApplicationContextRunner observed = this.contextRunner.withPropertyValues("idempotency.store.type=redis")
			.withBean(ClientResourcesBuilderCustomizer.class,
					() -> (builder) -> builder.tracing(new MicrometerTracing(ObservationRegistry.create(), "Redis")));
		observed.run((context) -> {
			ClientResources application = context.getBean(ClientResources.class);
			assertThat(application.tracing().isEnabled()).isTrue();
			ClientResources store = storeFactory(context).getClientConfiguration().getClientResources().orElseThrow();
			assertThat(store.tracing().isEnabled()).isFalse();
			assertThat(store.commandLatencyRecorder().isEnabled()).isFalse();
			// the same threads: no event loops of the store's own
			assertThat(store.eventLoopGroupProvider()).isSameAs(application.eventLoopGroupProvider());
			assertThat(store.eventExecutorGroup()).isSameAs(application.eventExecutorGroup());
			RedisIdempotencyStore redisStore = context.getBean(RedisIdempotencyStore.class);
			assertThat(redisStore.find(new RecordId("observed", UUID.randomUUID().toString()))).isEmpty();
			// closing the store's connections leaves the application's threads running
			context.getBean(RedisStoreConnections.class).destroy();
			assertThat(application.eventExecutorGroup().isShuttingDown()).isFalse();
			assertThat(context.getBean(RedisConnectionFactory.class).getConnection().ping()).isEqualTo("PONG");
		});
		observed.withPropertyValues("idempotency.store.redis.observe-commands=true")
			.run((context) -> assertThat(
					storeFactory(context).getClientConfiguration().getClientResources().orElseThrow())
				.isSameAs(context.getBean(ClientResources.class)));
	}

	@Test
	void theStoresConnectionIsClosedWithTheContext() {
		this.contextRunner.withPropertyValues("idempotency.store.type=redis").run((context) -> {
			LettuceConnectionFactory own = (LettuceConnectionFactory) context.getBean(RedisStoreConnections.class)
				.factory();
			assertThat(own.isRunning()).isTrue();
			context.close();
			assertThat(own.isRunning()).isFalse();
		});
	}

	@Test
	void withAClusterAndNoRefreshSettingsTheStoresConnectionFollowsTopologyChanges() {
		this.contextRunner.withPropertyValues("idempotency.store.type=redis", CLUSTER_NODES).run((context) -> {
			assertThat(refresh(context.getBean(LettuceConnectionFactory.class)).isPeriodicRefreshEnabled())
				.as("the application's own connection is left as Boot made it")
				.isFalse();
			ClusterTopologyRefreshOptions application = refresh(context.getBean(LettuceConnectionFactory.class));
			ClusterTopologyRefreshOptions store = refresh(storeFactory(context));
			assertThat(store.getAdaptiveRefreshTriggers()).containsExactlyInAnyOrder(RefreshTrigger.values());
			if (application.getAdaptiveRefreshTriggers().isEmpty()) {
				// Lettuce 6 (Boot 4.0) refreshes nothing by default: the store turns it
				// on.
				assertThat(store.isPeriodicRefreshEnabled()).isTrue();
				assertThat(store.getRefreshPeriod()).isEqualTo(RedisStoreConnections.DEFAULT_TOPOLOGY_REFRESH_PERIOD);
			}
			else {
				// Lettuce 7 (Boot 4.1) refreshes on every adaptive trigger by default:
				// the
				// application's connection already follows a failover, the store copies
				// it.
				assertThat(store.getAdaptiveRefreshTriggers())
					.containsExactlyInAnyOrderElementsOf(application.getAdaptiveRefreshTriggers());
			}
			assertThat(storeFactory(context).getClientConfiguration().getCommandTimeout())
				.isEqualTo(Duration.ofSeconds(2));
		});
	}

	@Test
	void theApplicationsOtherRefreshSettingsAreKeptWhenTheStoreTurnsRefreshOn() {
		this.contextRunner
			.withPropertyValues("idempotency.store.type=redis", CLUSTER_NODES,
					"spring.data.redis.lettuce.cluster.refresh.dynamic-refresh-sources=false")
			.run((context) -> {
				ClusterTopologyRefreshOptions store = refresh(storeFactory(context));
				assertThat(store.getAdaptiveRefreshTriggers()).containsExactlyInAnyOrder(RefreshTrigger.values());
				assertThat(store.useDynamicRefreshSources()).isFalse();
			});
	}

	@Test
	void refreshSettingsTheApplicationChoseAreCopiedAsTheyAre() {
		this.contextRunner
			.withPropertyValues("idempotency.store.type=redis", CLUSTER_NODES,
					"spring.data.redis.lettuce.cluster.refresh.adaptive=false")
			.run((context) -> {
				// What Boot made of adaptive=false: nothing on Lettuce 6, Lettuce 7's own
				// default (every trigger) on Boot 4.1. The store copies it either way.
				ClusterTopologyRefreshOptions application = refresh(context.getBean(LettuceConnectionFactory.class));
				ClusterTopologyRefreshOptions store = refresh(storeFactory(context));
				assertThat(store.isPeriodicRefreshEnabled()).isFalse();
				assertThat(store.getAdaptiveRefreshTriggers())
					.containsExactlyInAnyOrderElementsOf(application.getAdaptiveRefreshTriggers());
			});
		this.contextRunner
			.withPropertyValues("idempotency.store.type=redis", CLUSTER_NODES,
					"spring.data.redis.lettuce.cluster.refresh.period=30s")
			.run((context) -> {
				ClusterTopologyRefreshOptions application = refresh(context.getBean(LettuceConnectionFactory.class));
				ClusterTopologyRefreshOptions store = refresh(storeFactory(context));
				assertThat(store.getRefreshPeriod()).isEqualTo(Duration.ofSeconds(30));
				assertThat(store.getAdaptiveRefreshTriggers())
					.containsExactlyInAnyOrderElementsOf(application.getAdaptiveRefreshTriggers());
			});
		this.contextRunner.withPropertyValues("idempotency.store.type=redis", CLUSTER_NODES)
			.withBean(LettuceClientOptionsBuilderCustomizer.class,
					() -> (builder) -> ((ClusterClientOptions.Builder) builder)
						.topologyRefreshOptions(ClusterTopologyRefreshOptions.builder()
							.enableAdaptiveRefreshTrigger(RefreshTrigger.MOVED_REDIRECT)
							.build()))
			.run((context) -> {
				// Lettuce 6 builds exactly MOVED_REDIRECT, Lettuce 7 adds it to its
				// default
				// of every trigger: the store copies what the application's options hold.
				ClusterTopologyRefreshOptions application = refresh(context.getBean(LettuceConnectionFactory.class));
				ClusterTopologyRefreshOptions store = refresh(storeFactory(context));
				assertThat(application.getAdaptiveRefreshTriggers()).contains(RefreshTrigger.MOVED_REDIRECT);
				assertThat(store.isPeriodicRefreshEnabled()).isFalse();
				assertThat(store.getAdaptiveRefreshTriggers())
					.containsExactlyInAnyOrderElementsOf(application.getAdaptiveRefreshTriggers());
			});
	}

	@Test
	void withoutAClusterTheClientOptionsAreTheApplicationsWhenItsConnectTimeoutIsShorter() {
		this.contextRunner.withPropertyValues("idempotency.store.type=redis", "spring.data.redis.connect-timeout=500ms")
			.run((context) -> assertThat(storeFactory(context).getClientConfiguration().getClientOptions())
				.containsSame(context.getBean(LettuceConnectionFactory.class)
					.getClientConfiguration()
					.getClientOptions()
					.orElseThrow()));
	}

	/**
	 * Opening a connection takes up to the connect timeout (Lettuce's default: 10 s),
	 * then the handshake (the command timeout): the store's is bounded by its command
	 * timeout, on standalone Redis and on Redis Cluster, the rest of the options kept.
	 */
	@Test
	void theStoresConnectTimeoutIsAtMostItsCommandTimeout() {
		this.contextRunner.withPropertyValues("idempotency.store.type=redis").run((context) -> {
			ClientOptions application = clientOptions(context.getBean(LettuceConnectionFactory.class));
			ClientOptions store = clientOptions(storeFactory(context));
			assertThat(application.getSocketOptions().getConnectTimeout()).isEqualTo(Duration.ofSeconds(10));
			assertThat(store.getSocketOptions().getConnectTimeout()).isEqualTo(Duration.ofSeconds(2));
			assertThat(store.getTimeoutOptions()).isSameAs(application.getTimeoutOptions());
			assertThat(store.getSocketOptions().isKeepAlive()).isEqualTo(application.getSocketOptions().isKeepAlive());
			assertThat(store.isAutoReconnect()).isEqualTo(application.isAutoReconnect());
		});
		this.contextRunner
			.withPropertyValues("idempotency.store.type=redis", CLUSTER_NODES,
					"idempotency.store.redis.command-timeout=1500ms")
			.run((context) -> {
				ClientOptions store = clientOptions(storeFactory(context));
				assertThat(store).isInstanceOf(ClusterClientOptions.class);
				assertThat(store.getSocketOptions().getConnectTimeout()).isEqualTo(Duration.ofMillis(1500));
				assertThat(((ClusterClientOptions) store).getTopologyRefreshOptions().getAdaptiveRefreshTriggers())
					.containsExactlyInAnyOrder(RefreshTrigger.values());
			});
	}

	private static ClientOptions clientOptions(LettuceConnectionFactory factory) {
		return factory.getClientConfiguration().getClientOptions().orElseThrow();
	}

	private static LettuceConnectionFactory storeFactory(ApplicationContext context) {
		return (LettuceConnectionFactory) context.getBean(RedisStoreConnections.class).factory();
	}

	private static ClusterTopologyRefreshOptions refresh(LettuceConnectionFactory factory) {
		return ((ClusterClientOptions) factory.getClientConfiguration().getClientOptions().orElseThrow())
			.getTopologyRefreshOptions();
	}

	@Test
	void replicasToAckIsPassedToTheStore() {
		// the shared Redis has no replica: a store that must wait for one cannot reserve
		String prefix = "idem-test-" + UUID.randomUUID() + ":";
		this.contextRunner
			.withPropertyValues("idempotency.store.type=redis", "idempotency.store.redis.key-prefix=" + prefix,
					"idempotency.store.redis.replicas-to-ack=1", "idempotency.store.redis.replicas-ack-timeout=100ms")
			.run((context) -> {
				RedisIdempotencyStore store = context.getBean(RedisIdempotencyStore.class);
				RecordId id = new RecordId("autoconfigure-test", UUID.randomUUID().toString());
				assertThatExceptionOfType(IdempotencyStoreException.class)
					.isThrownBy(() -> store.reserve(new ReserveRequest(id, "fp", "op", UUID.randomUUID().toString(),
							Duration.ofMinutes(1), Duration.ofMinutes(2))))
					.withMessageContaining("0 of 1 replicas");
				assertThat(store.find(id)).as("given back").isEmpty();
			});
	}

	@Test
	void redisEvictionSettingsAreCheckedBeforeTheStoreExists() {
		this.contextRunner.withPropertyValues("idempotency.store.type=redis").run((context) -> {
			assertThat(context).hasSingleBean(RedisEvictionPolicyCheck.class);
			assertThat(context.getBean(IdempotencyRedisStoreProperties.class).getEvictionCheck())
				.isEqualTo(IdempotencyRedisStoreProperties.EvictionCheck.WARN);
			assertThat(context.getBeanFactory().getBeanDefinition("redisIdempotencyStore").getDependsOn())
				.containsExactly("idempotencyRedisEvictionPolicyCheck");
		});
	}

	@Test
	void evictionCheckFailStartsOnTheSharedRedisWhichDoesNotEvict() {
		// The shared Redis at 127.0.0.1:6379 has no maxmemory: it evicts nothing.
		this.contextRunner
			.withPropertyValues("idempotency.store.type=redis", "idempotency.store.redis.eviction-check=fail")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(IdempotencyRedisStoreProperties.class).getEvictionCheck())
					.isEqualTo(IdempotencyRedisStoreProperties.EvictionCheck.FAIL);
			});
	}

	@Test
	void evictionCheckFailStartsWhenRedisCannotBeAsked() {
		this.contextRunner
			.withPropertyValues("idempotency.store.type=redis", "idempotency.store.redis.eviction-check=fail",
					"spring.data.redis.port=1")
			.run((context) -> assertThat(context).hasNotFailed().hasSingleBean(RedisIdempotencyStore.class));
	}

	@Test
	void backsOffWhenTheApplicationDefinesAStore() {
		this.contextRunner.withPropertyValues("idempotency.store.type=redis")
			.withUserConfiguration(UserStoreConfiguration.class)
			.run((context) -> {
				assertThat(context).hasSingleBean(IdempotencyStore.class);
				assertThat(context).doesNotHaveBean(RedisIdempotencyStore.class);
				assertThat(context.getBean(IdempotencyStore.class)).isSameAs(context.getBean("userStore"));
			});
	}

	@Test
	void absentWithTypeMemory() {
		this.contextRunner.withPropertyValues("idempotency.store.type=memory").run((context) -> {
			assertThat(context).doesNotHaveBean(RedisIdempotencyStore.class);
			assertThat(context).doesNotHaveBean(IdempotencyRedisStoreProperties.class);
		});
	}

	@Test
	void absentWithoutAStoreType() {
		this.contextRunner.run((context) -> assertThat(context).doesNotHaveBean(RedisIdempotencyStore.class));
	}

	@Test
	void absentWithoutARedisConnectionFactory() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(IdempotencyRedisStoreAutoConfiguration.class))
			.withPropertyValues("idempotency.store.type=redis")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context).doesNotHaveBean(RedisIdempotencyStore.class);
			});
	}

	/**
	 * The acknowledgement settings are checked with every other idempotency.* property.
	 */
	@Test
	void acknowledgementSettingsAreReportedWithTheOtherProperties() {
		this.contextRunner.withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class))
			.withPropertyValues("idempotency.store.type=redis", "idempotency.lifetime=0s",
					"idempotency.store.redis.replicas-to-ack=-1")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.isInstanceOf(InvalidIdempotencySettingsException.class)
				.hasMessage("2 problems: idempotency.lifetime must be positive, was PT0S;"
						+ " idempotency.store.redis.replicas-to-ack must not be negative, was -1"));
	}

	@Test
	void aPrefixWithBracesFailsTheContext() {
		this.contextRunner
			.withPropertyValues("idempotency.store.type=redis", "idempotency.store.redis.key-prefix=app{1}:")
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.isInstanceOf(IllegalArgumentException.class)
				.hasMessageContaining("key prefix"));
	}

	@Test
	void isRegisteredAsAnAutoConfiguration() {
		assertThat(ImportCandidates.load(AutoConfiguration.class, getClass().getClassLoader()))
			.contains(IdempotencyRedisStoreAutoConfiguration.class.getName());
	}

	@Configuration(proxyBeanMethods = false)
	static class UserStoreConfiguration {

		@Bean
		IdempotencyStore userStore() {
			return InMemoryIdempotencyStore.builder()
				.clock(Clock.systemUTC())
				.maxEntries(100)
				.maxSharePerScope(1.0)
				.onFull(InMemoryIdempotencyStore.OnFull.REFUSE)
				.build();
		}

	}

}
