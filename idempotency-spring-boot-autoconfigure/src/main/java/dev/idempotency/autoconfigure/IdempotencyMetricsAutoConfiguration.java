package dev.idempotency.autoconfigure;

import dev.idempotency.core.internal.IdempotencyEngine;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.memory.InMemoryIdempotencyStore;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * The Micrometer binding, when Micrometer is present with a {@link MeterRegistry} bean
 * and an engine is there: the {@link MicrometerIdempotencyListener}, which the engine
 * hears every request through, and the in-memory store's meters.
 *
 * @since 0.2.0
 */
@AutoConfiguration(after = IdempotencyAutoConfiguration.class,
		afterName = "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration")
@ConditionalOnClass(MeterRegistry.class)
@ConditionalOnBean({ MeterRegistry.class, IdempotencyEngine.class })
public final class IdempotencyMetricsAutoConfiguration {

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
