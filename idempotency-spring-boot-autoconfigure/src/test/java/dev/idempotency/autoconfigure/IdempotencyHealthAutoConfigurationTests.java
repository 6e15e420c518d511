package dev.idempotency.autoconfigure;

import dev.idempotency.core.internal.IdempotencyEngine;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The store's health indicator: there with an engine and Boot's health support, away when
 * the indicator is switched off, without the health classes, or without the engine;
 * replaced by the application's own.
 */
class IdempotencyHealthAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(
			AutoConfigurations.of(IdempotencyAutoConfiguration.class, IdempotencyHealthAutoConfiguration.class));

	@Test
	void theStoresHealthIsReportedAsIdempotency() {
		this.runner.run((context) -> {
			assertThat(context).hasSingleBean(IdempotencyStoreHealthIndicator.class)
				.hasBean("idempotencyHealthIndicator");
			assertThat(context.getBean(IdempotencyStoreHealthIndicator.class).health().getStatus())
				.isEqualTo(Status.UP);
		});
	}

	@Test
	void theIndicatorCanBeSwitchedOffAsBootsOwn() {
		this.runner.withPropertyValues("management.health.idempotency.enabled=false")
			.run((context) -> assertThat(context).hasSingleBean(IdempotencyEngine.class)
				.doesNotHaveBean(IdempotencyStoreHealthIndicator.class));
		this.runner.withPropertyValues("management.health.defaults.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(IdempotencyStoreHealthIndicator.class));
	}

	@Test
	void withoutBootsHealthSupportThereIsNoIndicatorAndTheEngineStillStarts() {
		this.runner.withClassLoader(new FilteredClassLoader(HealthIndicator.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(IdempotencyEngine.class)
				.doesNotHaveBean(IdempotencyStoreHealthIndicator.class));
	}

	@Test
	void withoutAnEngineThereIsNoIndicator() {
		this.runner.withPropertyValues("idempotency.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(IdempotencyStoreHealthIndicator.class));
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(IdempotencyHealthAutoConfiguration.class))
			.run((context) -> assertThat(context).doesNotHaveBean(IdempotencyStoreHealthIndicator.class));
	}

	@Test
	void anIndicatorOfTheApplicationsOwnReplacesIt() {
		HealthIndicator own = () -> org.springframework.boot.health.contributor.Health.up().build();
		this.runner.withBean("idempotencyHealthIndicator", HealthIndicator.class, () -> own)
			.run((context) -> assertThat(context).doesNotHaveBean(IdempotencyStoreHealthIndicator.class)
				.getBean("idempotencyHealthIndicator")
				.isSameAs(own));
	}

}
