package dev.idempotency.actuate;

import dev.idempotency.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempotency.autoconfigure.IdempotencyEndpointAutoConfiguration;
import dev.idempotency.store.memory.InMemoryIdempotencyStore;
import org.junit.jupiter.api.Test;

import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/** Which beans the endpoint's auto-configuration makes, under which exposure. */
class IdempotencyEndpointAutoConfigurationTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(
			AutoConfigurations.of(IdempotencyAutoConfiguration.class, IdempotencyEndpointAutoConfiguration.class));

	@Test
	void notExposedByDefaultSoNoEndpoint() {
		this.runner.run((context) -> assertThat(context).hasNotFailed()
			.doesNotHaveBean(IdempotencyEndpoint.class)
			.doesNotHaveBean(IdempotencyEndpointWebExtension.class));
	}

	@Test
	void exposedOverHttpTheEndpointAndItsWebExtensionReadTheEnginesStore() {
		this.runner.withPropertyValues("management.endpoints.web.exposure.include=idempotency").run((context) -> {
			assertThat(context).hasSingleBean(IdempotencyEndpoint.class)
				.hasSingleBean(IdempotencyEndpointWebExtension.class);
			assertThat(context.getBean(IdempotencyEndpoint.class).records("absent", "anonymous", null)).isNull();
		});
	}

	@Test
	void exposedOverJmxOnlyTheEndpointWithoutItsWebExtension() {
		this.runner
			.withPropertyValues("spring.jmx.enabled=true", "management.endpoints.jmx.exposure.include=idempotency")
			.run((context) -> assertThat(context).hasSingleBean(IdempotencyEndpoint.class)
				.doesNotHaveBean(IdempotencyEndpointWebExtension.class));
	}

	@Test
	void withoutActuatorNoEndpoint() {
		this.runner.withPropertyValues("management.endpoints.web.exposure.include=idempotency")
			.withClassLoader(new FilteredClassLoader(Endpoint.class))
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(IdempotencyEndpoint.class));
	}

	@Test
	void anEndpointOfTheApplicationsOwnReplacesIt() {
		IdempotencyEndpoint own = new IdempotencyEndpoint(InMemoryIdempotencyStore.builder()
			.clock(java.time.Clock.systemUTC())
			.maxEntries(10)
			.maxSharePerScope(1.0)
			.onFull(InMemoryIdempotencyStore.OnFull.REFUSE)
			.build());
		this.runner.withPropertyValues("management.endpoints.web.exposure.include=idempotency")
			.withBean(IdempotencyEndpoint.class, () -> own)
			.run((context) -> assertThat(context.getBean(IdempotencyEndpoint.class)).isSameAs(own));
	}

}
