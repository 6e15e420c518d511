package dev.idempotency.autoconfigure;

import dev.idempotency.core.internal.IdempotencyEngine;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Micrometer binding: there with an engine and a {@link MeterRegistry} bean, away
 * without the registry, without Micrometer on the class path, or without the engine.
 */
class IdempotencyMetricsAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(
			AutoConfigurations.of(IdempotencyAutoConfiguration.class, IdempotencyMetricsAutoConfiguration.class));

	@Test
	void withARegistryTheEngineIsHeardAndTheInMemoryStoreMeasured() {
		this.runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new).run((context) -> {
			assertThat(context).hasSingleBean(MicrometerIdempotencyListener.class)
				.hasBean("idempotencyMemoryStoreMeters");
			MeterRegistry registry = context.getBean(MeterRegistry.class);
			context.getBean("idempotencyMemoryStoreMeters", io.micrometer.core.instrument.binder.MeterBinder.class)
				.bindTo(registry);
			assertThat(registry.find("idempotency.store.memory.evictions").meters()).isNotEmpty();
		});
	}

	@Test
	void withoutARegistryThereIsNoBinding() {
		this.runner.run((context) -> assertThat(context).hasSingleBean(IdempotencyEngine.class)
			.doesNotHaveBean(MicrometerIdempotencyListener.class)
			.doesNotHaveBean("idempotencyMemoryStoreMeters"));
	}

	@Test
	void withoutMicrometerOnTheClassPathThereIsNoBindingAndTheEngineStillStarts() {
		this.runner.withClassLoader(new FilteredClassLoader(MeterRegistry.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(IdempotencyEngine.class)
				.doesNotHaveBean(MicrometerIdempotencyListener.class));
	}

	@Test
	void withoutAnEngineThereIsNoBinding() {
		this.runner.withPropertyValues("idempotency.enabled=false")
			.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
			.run((context) -> assertThat(context).doesNotHaveBean(MicrometerIdempotencyListener.class)
				.doesNotHaveBean("idempotencyMemoryStoreMeters"));
	}

}
