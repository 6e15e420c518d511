package dev.idempotency.autoconfigure;

import java.time.Clock;
import java.time.Duration;

import dev.idempotency.core.IdempotencySettings;
import dev.idempotency.core.IdempotencyTemplate;
import dev.idempotency.core.IdempotentRequest;
import dev.idempotency.core.ResultCodec;
import dev.idempotency.core.internal.IdempotencyEngine;
import dev.idempotency.core.internal.IdempotentCall;
import dev.idempotency.method.IdempotencyMethodAutoConfiguration;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.memory.InMemoryIdempotencyStore;
import dev.idempotency.store.seal.SealingStore;
import dev.idempotency.test.TestKeys;
import dev.idempotency.web.IdempotencyErrorRenderer;
import dev.idempotency.web.IdempotencyScopeResolver;
import dev.idempotency.web.IdempotencyWebMvcAutoConfiguration;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

class IdempotencyAutoConfigurationTests {

	private final WebApplicationContextRunner web = new WebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(IdempotencyAutoConfiguration.class,
				IdempotencyHealthAutoConfiguration.class, IdempotencyMetricsAutoConfiguration.class,
				IdempotencyWebMvcAutoConfiguration.class, IdempotencyMethodAutoConfiguration.class));

	@Test
	void theDefaultsGiveAnEngineOnTheInMemoryStoreAndBothFrontDoors() {
		this.web.run((context) -> {
			assertThat(context).hasSingleBean(IdempotencyEngine.class)
				.hasSingleBean(InMemoryIdempotencyStore.class)
				.hasBean("idempotencyInterceptor")
				.hasBean("idempotentMethodPostProcessor")
				.hasBean("idempotentMethodInterceptor")
				.doesNotHaveBean(IdempotencyErrorRenderer.class)
				.hasSingleBean(IdempotencyScopeResolver.class)
				.hasBean("idempotencyFilterRegistration");
			assertThat(context.getBean(InMemoryIdempotencyStore.class).maxBytes())
				.isEqualTo(Runtime.getRuntime().maxMemory() / 16);
			IdempotencySettings settings = context.getBean(IdempotencyEngine.class).settings();
			assertThat(settings.lifetime()).isEqualTo(Duration.ofMinutes(30));
			assertThat(settings.retention()).isEqualTo(Duration.ofMinutes(35));
			assertThat(settings.storeFailure().mode()).isEqualTo(IdempotencySettings.FailureMode.FAIL_CLOSED);
			assertThat(settings.inFlight().status().status()).isEqualTo(409);
			assertThat(settings.mode()).isEqualTo(IdempotencySettings.Mode.LEASE);
		});
	}

	@Test
	void theTemplateRunsOnTheAutoConfiguredEngineAndStore() {
		this.web.run((context) -> {
			IdempotencyTemplate template = context.getBean(IdempotencyTemplate.class);
			IdempotentRequest request = IdempotentRequest.of("order-7", "placeOrder", new byte[] { 7 });
			assertThat(template.execute(request, ResultCodec.utf8(), () -> "placed")).isEqualTo("placed");
			assertThat(template.execute(request, ResultCodec.utf8(), () -> "placed again")).isEqualTo("placed");
			assertThat(context.getBean(InMemoryIdempotencyStore.class)
				.inspect(IdempotencyEngine.recordId("", "order-7", IdempotentCall.Door.METHOD))).isPresent();
		});
	}

	@Test
	void propertiesReachTheEngine() {
		this.web
			.withPropertyValues("idempotency.lifetime=PT10M", "idempotency.grace=PT1M", "idempotency.lease=PT5S",
					"idempotency.heartbeat-interval=PT1S", "idempotency.in-flight.status=service-unavailable",
					"idempotency.store.failure-mode=fail-open", "idempotency.response.max-body-size=64KB",
					"idempotency.key-age-policy=warn", "idempotency.store.memory.max-entries=7",
					"idempotency.store.memory.max-bytes=3MB", "idempotency.store.memory.max-share-per-scope=0.5",
					"idempotency.mode=record-after-success")
			.run((context) -> {
				IdempotencySettings settings = context.getBean(IdempotencyEngine.class).settings();
				assertThat(settings.retention()).isEqualTo(Duration.ofMinutes(11));
				assertThat(settings.lease().duration()).isEqualTo(Duration.ofSeconds(5));
				assertThat(settings.inFlight().status().status()).isEqualTo(503);
				assertThat(settings.storeFailure().mode()).isEqualTo(IdempotencySettings.FailureMode.FAIL_OPEN);
				assertThat(settings.maxBodyBytes()).isEqualTo(64 * 1024);
				assertThat(settings.keyAgePolicy()).isEqualTo(IdempotencySettings.KeyAgePolicy.WARN);
				assertThat(settings.mode()).isEqualTo(IdempotencySettings.Mode.RECORD_AFTER_SUCCESS);
				assertThat(context.getBean(InMemoryIdempotencyStore.class).maxEntries()).isEqualTo(7);
				assertThat(context.getBean(InMemoryIdempotencyStore.class).maxBytes()).isEqualTo(3 * 1024 * 1024);
				assertThat(context.getBean(InMemoryIdempotencyStore.class).maxSharePerScope()).isEqualTo(0.5);
			});
	}

	@Test
	void theInMemoryStoreGivesOneScopeAQuarterByDefault() {
		this.web.run((context) -> assertThat(context.getBean(InMemoryIdempotencyStore.class).maxSharePerScope())
			.isEqualTo(0.25));
	}

	@Test
	void theInMemoryStoresBuilderDefaultsAreThoseOfItsProperties() {
		IdempotencyMemoryStoreProperties properties = new IdempotencyMemoryStoreProperties();
		InMemoryIdempotencyStore built = InMemoryIdempotencyStore.builder().build();
		assertThat(built.maxEntries()).isEqualTo(properties.getMaxEntries());
		assertThat(built.maxSharePerScope()).isEqualTo(properties.getMaxSharePerScope()).isEqualTo(0.25);
		assertThat(built.onFull()).isEqualTo(properties.getOnFull());
		assertThat(properties.getMaxBytes()).isNull();
		assertThat(built.maxBytes()).isEqualTo(InMemoryIdempotencyStore.defaultMaxBytes());
	}

	@Test
	void theInMemoryStoreEvictsCompletedRecordsByDefaultAndRefusesWhenAsked() {
		this.web.run((context) -> assertThat(context.getBean(InMemoryIdempotencyStore.class).onFull())
			.isEqualTo(InMemoryIdempotencyStore.OnFull.EVICT));
		this.web.withPropertyValues("idempotency.store.memory.on-full=refuse")
			.run((context) -> assertThat(context.getBean(InMemoryIdempotencyStore.class).onFull())
				.isEqualTo(InMemoryIdempotencyStore.OnFull.REFUSE));
	}

	@Test
	void theInMemoryStoreShowsItsEvictionsAndTheRetentionInEffectAsMeters() {
		this.web.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
			.withPropertyValues("idempotency.store.memory.max-entries=3")
			.run((context) -> {
				MeterRegistry registry = context.getBean(MeterRegistry.class);
				context.getBean("idempotencyMemoryStoreMeters", io.micrometer.core.instrument.binder.MeterBinder.class)
					.bindTo(registry);
				IdempotencyEngine engine = context.getBean(IdempotencyEngine.class);
				for (int i = 0; i < 5; i++) {
					dev.idempotency.core.internal.Decision decision = engine
						.begin(new dev.idempotency.core.internal.IdempotentCall("anonymous",
								java.util.List.of(TestKeys.newKey()), dev.idempotency.core.KeyFormat.UUID_V7, false,
								"op", () -> "fp"));
					assertThat(decision).isInstanceOf(dev.idempotency.core.internal.Decision.Proceed.class);
					engine.succeeded(
							java.util.Objects.requireNonNull(
									((dev.idempotency.core.internal.Decision.Proceed) decision).reservation()),
							new dev.idempotency.store.StoredResponse(200, java.util.Map.of(), new byte[0]));
				}
				assertThat(registry.get("idempotency.store.memory.evictions").functionCounter().count()).isEqualTo(2.0);
				assertThat(registry.get("idempotency.store.memory.records").gauge().value()).isEqualTo(3.0);
				assertThat(registry.get("idempotency.store.memory.bytes").gauge().value()).isPositive();
				assertThat(registry.get("idempotency.store.memory.oldest.age").timeGauge().value()).isNotNegative();
			});
	}

	@ParameterizedTest
	@ValueSource(strings = { "0", "-0.1", "1.5", "NaN" })
	void aSharePerScopeOutsideZeroToOneFailsAtStartupNamingTheProperty(String share) {
		this.web.withPropertyValues("idempotency.store.memory.max-share-per-scope=" + share)
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.isInstanceOf(InvalidIdempotencySettingsException.class)
				.hasMessageContaining(
						"idempotency.store.memory.max-share-per-scope must be more than 0 and at most 1"));
	}

	@Test
	void inconsistentDurationsFailAtStartupWithTheReason() {
		this.web.withPropertyValues("idempotency.lease=PT10S", "idempotency.heartbeat-interval=PT20S")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("heartbeat-interval")
				.hasMessageContaining("at most half of idempotency.lease"));
	}

	@Test
	void aNegativeRequestBodyLimitFailsAtStartupNamingTheProperty() {
		this.web.withPropertyValues("idempotency.request.max-body-size=-1B")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.isInstanceOf(InvalidIdempotencySettingsException.class)
				.hasMessageContaining("idempotency.request.max-body-size must be zero or more, was -1B"));
	}

	@Test
	void everythingBacksOffToTheUsersBeans() {
		this.web.withUserConfiguration(UserBeans.class).run((context) -> {
			assertThat(context).getBeans(IdempotencyStore.class).containsOnlyKeys("myStore");
			assertThat(context.getBean(IdempotencyStore.class)).isSameAs(context.getBean("myStore"));
			assertThat(context.getBean(IdempotencyErrorRenderer.class)).isSameAs(context.getBean("myRenderer"));
			assertThat(context.getBean(IdempotencyScopeResolver.class)).isSameAs(context.getBean("myScope"));
			assertThat(SealingStore.unwrap(context.getBean(IdempotencyEngine.class).store()))
				.isSameAs(context.getBean("myStore"));
		});
	}

	@Test
	void disabledMeansNoBeansAtAll() {
		this.web.withPropertyValues("idempotency.enabled=false")
			.withBean(MeterRegistry.class, SimpleMeterRegistry::new)
			.run((context) -> {
				assertThat(context).doesNotHaveBean(IdempotencyEngine.class)
					.doesNotHaveBean(IdempotencyStoreHealthIndicator.class)
					.doesNotHaveBean(MicrometerIdempotencyListener.class)
					.doesNotHaveBean("idempotencyMemoryStoreMeters")
					.doesNotHaveBean(IdempotencyStore.class)
					.doesNotHaveBean("idempotencyInterceptor")
					.doesNotHaveBean("idempotentMethodPostProcessor")
					.doesNotHaveBean("idempotentMethodInterceptor")
					.doesNotHaveBean(FilterRegistrationBean.class);
			});
	}

	/**
	 * Turned off, the starter says so once at start-up (the switch left on from a test or
	 * a profile would otherwise leave every annotated handler unprotected without a
	 * word); turned on, it says nothing of the kind.
	 */
	@Test
	void turnedOffTheStarterSaysSoOnceAtStartUp() {
		WebApplicationContextRunner withNotice = this.web
			.withConfiguration(AutoConfigurations.of(IdempotencyDisabledAutoConfiguration.class));
		java.util.List<String> said = new java.util.concurrent.CopyOnWriteArrayList<>();
		ch.qos.logback.classic.Logger logger = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory
			.getLogger(IdempotencyDisabledAutoConfiguration.class);
		ch.qos.logback.core.AppenderBase<ch.qos.logback.classic.spi.ILoggingEvent> appender = new ch.qos.logback.core.AppenderBase<>() {

			@Override
			protected void append(ch.qos.logback.classic.spi.ILoggingEvent event) {
				said.add(event.getLevel() + " " + event.getFormattedMessage());
			}

		};
		appender.start();
		logger.addAppender(appender);
		try {
			withNotice.run((context) -> assertThat(context).hasNotFailed());
			assertThat(said).isEmpty();
			withNotice.withPropertyValues("idempotency.enabled=false")
				.run((context) -> assertThat(context).hasNotFailed());
			assertThat(said).singleElement()
				.asString()
				.startsWith("WARN Idempotency-Key protection is off (idempotency.enabled=false)")
				.contains("run unprotected");
		}
		finally {
			logger.detachAppender(appender);
		}
	}

	@Test
	void aStoreTypeWithoutItsStoreFailsWithAClearMessage() {
		this.web.withPropertyValues("idempotency.store.type=jdbc")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("idempotency.store.type=jdbc")
				.hasMessageContaining("DataSource"));
	}

	@Test
	void outcomesAreCountedWhenMicrometerIsThere() {
		this.web.withBean(MeterRegistry.class, SimpleMeterRegistry::new).run((context) -> {
			assertThat(context).hasSingleBean(MicrometerIdempotencyListener.class);
			context.getBean(MicrometerIdempotencyListener.class)
				.onOutcome(dev.idempotency.core.IdempotencyOutcome.REPLAYED, "op");
			assertThat(context.getBean(MeterRegistry.class)
				.get(MicrometerIdempotencyListener.METER_NAME)
				.tag("outcome", "replayed")
				.tag("store", "memory")
				.counter()
				.count()).isEqualTo(1.0);
		});
	}

	@Test
	void storeCallsAreTimedAndTheStoreReportsItsHealth() {
		this.web.withBean(MeterRegistry.class, SimpleMeterRegistry::new).run((context) -> {
			IdempotencyEngine engine = context.getBean(IdempotencyEngine.class);
			dev.idempotency.core.internal.Decision decision = engine
				.begin(new dev.idempotency.core.internal.IdempotentCall("s", java.util.List.of(TestKeys.newKey()),
						dev.idempotency.core.KeyFormat.UUID_V7, false, "op", () -> "fp"));
			assertThat(decision).isInstanceOf(dev.idempotency.core.internal.Decision.Proceed.class);
			assertThat(context.getBean(MeterRegistry.class)
				.get(MicrometerIdempotencyListener.TIMER_NAME)
				.tag("call", "reserve")
				.tag("outcome", "success")
				.timer()
				.count()).isEqualTo(1);
			org.springframework.boot.health.contributor.Health health = context
				.getBean(IdempotencyStoreHealthIndicator.class)
				.health();
			assertThat(health.getStatus()).isEqualTo(org.springframework.boot.health.contributor.Status.UP);
			assertThat(health.getDetails()).containsEntry("store", "memory");
		});
	}

	@Configuration(proxyBeanMethods = false)
	static class UserBeans {

		@Bean
		IdempotencyStore myStore() {
			return InMemoryIdempotencyStore.builder()
				.clock(Clock.systemUTC())
				.maxEntries(5)
				.maxSharePerScope(1.0)
				.onFull(InMemoryIdempotencyStore.OnFull.REFUSE)
				.build();
		}

		@Bean
		IdempotencyErrorRenderer myRenderer() {
			return (error, request, response) -> response.setStatus(error.status());
		}

		@Bean
		IdempotencyScopeResolver myScope() {
			return (request) -> "tenant";
		}

	}

}
