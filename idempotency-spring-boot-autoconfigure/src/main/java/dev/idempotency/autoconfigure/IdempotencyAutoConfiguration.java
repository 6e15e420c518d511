package dev.idempotency.autoconfigure;

import java.time.Clock;
import java.util.List;

import dev.idempotency.core.IdempotencyListener;
import dev.idempotency.core.IdempotencySettings;
import dev.idempotency.core.IdempotencyTemplate;
import dev.idempotency.core.internal.IdempotencyEngine;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.memory.InMemoryIdempotencyStore;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.observation.ObservationRegistry;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The engine, its settings, the lifecycle of its heartbeat thread, the
 * {@link IdempotencyTemplate} over it, and the in-memory store when no other store is
 * configured; the store's health indicator and the Micrometer binding when Actuator and
 * Micrometer are present. Store auto-configurations (JDBC, Redis) run before this one and
 * contribute the {@link IdempotencyStore} bean for their {@code idempotency.store.type}.
 * Invalid settings and a missing store fail the start-up with a failure analysis.
 *
 * @since 0.1.0
 */
@AutoConfiguration(
		afterName = "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration")
@ConditionalOnBooleanProperty(name = "idempotency.enabled", matchIfMissing = true)
@EnableConfigurationProperties(IdempotencyProperties.class)
public final class IdempotencyAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	IdempotencySettings idempotencySettings(IdempotencyProperties properties) {
		return properties.toSettings();
	}

	@Bean
	@ConditionalOnMissingBean(IdempotencyStore.class)
	@ConditionalOnProperty(name = "idempotency.store.type", havingValue = "memory", matchIfMissing = true)
	InMemoryIdempotencyStore inMemoryIdempotencyStore(IdempotencyProperties properties) {
		IdempotencyProperties.Memory memory = properties.getStore().getMemory();
		long maxBytes = (memory.getMaxBytes() != null)
				? IdempotencyProperties.bytes(memory.getMaxBytes(), "idempotency.store.memory.max-bytes", false)
				: InMemoryIdempotencyStore.defaultMaxBytes();
		if (memory.getMaxEntries() < 1) {
			throw new InvalidIdempotencySettingsException(List.of("idempotency.store.memory.max-entries"),
					"idempotency.store.memory.max-entries must be positive, was " + memory.getMaxEntries(),
					"Set idempotency.store.memory.max-entries to a positive number, or remove it for the default.");
		}
		double share = memory.getMaxSharePerScope();
		if (!(share > 0 && share <= 1)) {
			throw new InvalidIdempotencySettingsException(List.of("idempotency.store.memory.max-share-per-scope"),
					"idempotency.store.memory.max-share-per-scope must be more than 0 and at most 1, was " + share,
					"Set idempotency.store.memory.max-share-per-scope to a fraction such as 0.25 (a quarter of"
							+ " max-entries and of max-bytes per scope), 1 for no share, or remove it for the default.");
		}
		return new InMemoryIdempotencyStore(Clock.systemUTC(), memory.getMaxEntries(), maxBytes, share,
				memory.getOnFull());
	}

	@Bean(destroyMethod = "close")
	@ConditionalOnMissingBean
	IdempotencyEngine idempotencyEngine(ObjectProvider<IdempotencyStore> store, IdempotencySettings settings,
			IdempotencyProperties properties, ObjectProvider<IdempotencyListener> listener,
			ObjectProvider<ObservationRegistry> observationRegistry, ListableBeanFactory beanFactory) {
		IdempotencyStore available = store.getIfUnique();
		if (available == null) {
			throw new IdempotencyStoreNotFoundException(properties.getStore().getType(),
					List.of(beanFactory.getBeanNamesForType(IdempotencyStore.class)));
		}
		// The store's own timeout is checked by its auto-configuration, where it is
		// known.
		LeaseMargin.check(settings, null, null);
		// Every listener bean, in order: the application's own and the Micrometer
		// binding. Without an ObservationRegistry bean (Boot makes one with Actuator),
		// nothing is observed and a call pays one check.
		return new IdempotencyEngine(available, settings, Clock.systemUTC(),
				CompositeIdempotencyListener.of(listener.orderedStream().toList()),
				observationRegistry.getIfUnique(() -> ObservationRegistry.NOOP),
				properties.getObservation().isKeyHash());
	}

	/**
	 * The programmatic API over the engine the doors share: its heartbeat, store,
	 * settings, listeners and observations. Closing it leaves the engine to its
	 * lifecycle.
	 */
	@Bean
	@ConditionalOnMissingBean
	IdempotencyTemplate idempotencyTemplate(IdempotencyEngine engine) {
		return new IdempotencyTemplate(engine);
	}

	@Bean
	@ConditionalOnMissingBean(name = "idempotencyEngineLifecycle")
	IdempotencyEngineLifecycle idempotencyEngineLifecycle(IdempotencyEngine engine) {
		return new IdempotencyEngineLifecycle(engine);
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(HealthIndicator.class)
	@ConditionalOnEnabledHealthIndicator("idempotency")
	static class HealthConfiguration {

		@Bean
		@ConditionalOnMissingBean(name = "idempotencyHealthIndicator")
		IdempotencyStoreHealthIndicator idempotencyHealthIndicator(IdempotencyEngine engine) {
			return new IdempotencyStoreHealthIndicator(engine.store());
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(MeterRegistry.class)
	@ConditionalOnBean(MeterRegistry.class)
	static class MetricsConfiguration {

		@Bean
		@ConditionalOnMissingBean
		MicrometerIdempotencyListener micrometerIdempotencyListener(MeterRegistry registry,
				ObjectProvider<IdempotencyStore> store) {
			IdempotencyStore available = store.getIfUnique();
			return new MicrometerIdempotencyListener(registry, (available != null) ? available.name() : "none");
		}

		@Bean
		@ConditionalOnMissingBean(name = "idempotencyMemoryStoreMeters")
		MeterBinder idempotencyMemoryStoreMeters(ObjectProvider<IdempotencyStore> store) {
			return (registry) -> {
				if (store.getIfUnique() instanceof InMemoryIdempotencyStore memory) {
					InMemoryStoreMeters.bind(memory, registry);
				}
			};
		}

	}

}
