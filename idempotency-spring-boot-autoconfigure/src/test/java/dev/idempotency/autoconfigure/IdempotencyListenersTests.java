package dev.idempotency.autoconfigure;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import dev.idempotency.core.IdempotencyListener;
import dev.idempotency.core.IdempotencyOutcome;
import dev.idempotency.core.KeyFormat;
import dev.idempotency.core.internal.Decision;
import dev.idempotency.core.internal.IdempotencyEngine;
import dev.idempotency.core.internal.IdempotentCall;
import dev.idempotency.test.TestKeys;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.annotation.Order;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every {@link IdempotencyListener} bean hears the engine: the application's own and the
 * Micrometer binding, in their order.
 */
class IdempotencyListenersTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(
			AutoConfigurations.of(IdempotencyAutoConfiguration.class, IdempotencyMetricsAutoConfiguration.class));

	@Test
	void anApplicationListenerAndTheMetricsBothHearEveryRequest() {
		this.runner.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
			.withUserConfiguration(OneListener.class)
			.run((context) -> {
				assertThat(context).hasSingleBean(MicrometerIdempotencyListener.class);
				Decision decision = context.getBean(IdempotencyEngine.class).begin(call());
				assertThat(decision).isInstanceOf(Decision.Proceed.class);
				assertThat(context.getBean(OneListener.class).heard).containsExactly("first:executed");
				assertThat(context.getBean(MeterRegistry.class)
					.get(MicrometerIdempotencyListener.METER_NAME)
					.tag("outcome", "executed")
					.counter()
					.count()).isEqualTo(1.0);
			});
	}

	@Test
	void severalApplicationListenersAreCalledInTheirOrder() {
		this.runner.withUserConfiguration(TwoListeners.class).run((context) -> {
			context.getBean(IdempotencyEngine.class).begin(call());
			assertThat(context.getBean(TwoListeners.class).heard).containsExactly("first:executed", "second:executed");
		});
	}

	private static IdempotentCall call() {
		return new IdempotentCall("scope", List.of(TestKeys.newKey()), KeyFormat.UUID_V7, false, "op", () -> "fp");
	}

	private static IdempotencyListener recording(List<String> heard, String name) {
		return (IdempotencyOutcome outcome, String operation) -> heard
			.add(name + ":" + outcome.name().toLowerCase(java.util.Locale.ROOT));
	}

	@Configuration(proxyBeanMethods = false)
	static class OneListener {

		final List<String> heard = new CopyOnWriteArrayList<>();

		@Bean
		IdempotencyListener auditListener() {
			return recording(this.heard, "first");
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class TwoListeners {

		final List<String> heard = new CopyOnWriteArrayList<>();

		@Bean
		@Order(2)
		IdempotencyListener secondListener() {
			return recording(this.heard, "second");
		}

		@Bean
		@Order(1)
		IdempotencyListener firstListener() {
			return recording(this.heard, "first");
		}

	}

}
