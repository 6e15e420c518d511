package dev.idempotency.autoconfigure;

import java.time.Duration;
import java.util.UUID;

import dev.idempotency.autoconfigure.jdbc.IdempotencyJdbcStoreAutoConfiguration;
import dev.idempotency.autoconfigure.redis.IdempotencyRedisStoreAutoConfiguration;
import dev.idempotency.core.IdempotencySettings;
import dev.idempotency.core.internal.IdempotencyEngine;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ContextConsumer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A lease must outlive the gap between two heartbeats of a running owner:
 * heartbeat-interval + the store's timeout + a sweep (a quarter interval) + 500 ms <
 * lease, and lease >= 1 s; checked at start-up, on every store with its own timeout.
 */
class LeaseMarginTests {

	private final ApplicationContextRunner runner = new ApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class, DataRedisAutoConfiguration.class,
				IdempotencyJdbcStoreAutoConfiguration.class, IdempotencyRedisStoreAutoConfiguration.class,
				IdempotencyAutoConfiguration.class))
		.withPropertyValues("spring.datasource.generate-unique-name=false", "spring.datasource.url=jdbc:h2:mem:lease_"
				+ UUID.randomUUID().toString().replace("-", "") + ";DB_CLOSE_DELAY=-1");

	@Test
	void millisecondLeasesAreRefusedAtStartUp() {
		this.runner.withPropertyValues("idempotency.lease=PT0.002S", "idempotency.heartbeat-interval=PT0.001S")
			.run(refused("idempotency.lease (PT0.002S) must be at least PT1S"));
	}

	@Test
	void aTooShortLeaseIsToldTheEnginesDefaults() {
		this.runner.withPropertyValues("idempotency.lease=800ms", "idempotency.heartbeat-interval=200ms")
			.run((context) -> assertThat(
					((InvalidIdempotencySettingsException) org.springframework.core.NestedExceptionUtils
						.getRootCause(context.getStartupFailure())).action())
				.isEqualTo("Set idempotency.lease to at least PT1S (the default is 30s, with a heartbeat-interval"
						+ " of 10s)."));
	}

	@Test
	void onTheInMemoryStoreTheLeaseMustCoverAnIntervalASweepAndAPause() {
		// 500 ms + 125 ms + 500 ms = 1.125 s, not less than the lease of 1 s.
		this.runner.withPropertyValues("idempotency.lease=1s", "idempotency.heartbeat-interval=500ms")
			.run(refused("idempotency.lease (PT1S) must be longer than idempotency.heartbeat-interval (PT0.5S)"
					+ " + one heartbeat sweep (a quarter interval, PT0.125S) + a pause allowance (PT0.5S) = PT1.125S"));
		this.runner.withPropertyValues("idempotency.lease=1200ms", "idempotency.heartbeat-interval=500ms")
			.run((context) -> assertThat(context).hasNotFailed().hasSingleBean(IdempotencyEngine.class));
	}

	@Test
	void onJdbcTheQueryTimeoutCountsInWholeSeconds() {
		ApplicationContextRunner jdbc = this.runner.withPropertyValues("idempotency.store.type=jdbc",
				"idempotency.lease=3s", "idempotency.heartbeat-interval=1s");
		// The default query-timeout, 2 s: 1 + 2 + 0.25 + 0.5 = 3.75 s.
		jdbc.run(refused("+ the store's timeout idempotency.store.jdbc.query-timeout (PT2S)", "= PT3.75S"));
		jdbc.run((context) -> assertThat(
				((InvalidIdempotencySettingsException) org.springframework.core.NestedExceptionUtils
					.getRootCause(context.getStartupFailure())).action())
			.isEqualTo("Set idempotency.lease to more than PT3.75S, or lower idempotency.heartbeat-interval or"
					+ " idempotency.store.jdbc.query-timeout."));
		// 1.5 s is 2 s for JDBC.
		jdbc.withPropertyValues("idempotency.store.jdbc.query-timeout=1500ms")
			.run(refused("idempotency.store.jdbc.query-timeout (PT2S)"));
		jdbc.withPropertyValues("idempotency.store.jdbc.query-timeout=0s")
			.run(refused("idempotency.store.jdbc.query-timeout is PT0S (none)"));
		jdbc.withPropertyValues("idempotency.store.jdbc.query-timeout=1s")
			.run((context) -> assertThat(context).hasNotFailed().hasSingleBean(IdempotencyEngine.class));
		// No lease is held in record-after-success mode.
		jdbc.withPropertyValues("idempotency.mode=record-after-success")
			.run((context) -> assertThat(context).hasNotFailed().hasSingleBean(IdempotencyEngine.class));
	}

	@Test
	void onRedisTheStoresCommandTimeoutCounts() {
		ApplicationContextRunner redis = this.runner.withPropertyValues("idempotency.store.type=redis",
				"idempotency.lease=3s", "idempotency.heartbeat-interval=1s");
		redis.run(refused("+ the store's timeout idempotency.store.redis.command-timeout (PT2S)", "= PT3.75S"));
		redis.withPropertyValues("idempotency.store.redis.command-timeout=1s")
			.run((context) -> assertThat(context).hasNotFailed().hasSingleBean(IdempotencyEngine.class));
	}

	@Test
	void onRedisACommandTimeoutOfZeroIsNoneAndRefusedInLeaseMode() {
		ApplicationContextRunner redis = this.runner.withPropertyValues("idempotency.store.type=redis",
				"idempotency.store.redis.command-timeout=0s");
		redis.run(refused("idempotency.store.redis.command-timeout is PT0S (none)"));
		redis.withPropertyValues("idempotency.mode=record-after-success")
			.run((context) -> assertThat(context).hasNotFailed().hasSingleBean(IdempotencyEngine.class));
	}

	/**
	 * Settings the application declares as a bean replace the properties, and their lease
	 * is checked against the store's timeout all the same.
	 */
	@Test
	void settingsOfTheApplicationsOwnAreCheckedToo() {
		this.runner.withPropertyValues("idempotency.store.type=jdbc")
			.withBean(IdempotencySettings.class,
					() -> IdempotencySettings.builder()
						.lease(Duration.ofSeconds(3))
						.heartbeatInterval(Duration.ofSeconds(1))
						.build())
			.run(refused("idempotency.lease (PT3S) must be longer than idempotency.heartbeat-interval (PT1S)"
					+ " + the store's timeout idempotency.store.jdbc.query-timeout (PT2S)"));
	}

	@Test
	void theStoresTimeoutIsReportedWithTheOtherProblems() {
		this.runner
			.withPropertyValues("idempotency.store.type=jdbc", "idempotency.store.jdbc.query-timeout=0s",
					"idempotency.in-flight.poll-interval=0s")
			.run((context) -> {
				InvalidIdempotencySettingsException failure = (InvalidIdempotencySettingsException) org.springframework.core.NestedExceptionUtils
					.getRootCause(context.getStartupFailure());
				assertThat(failure.properties()).containsExactly("idempotency.store.jdbc.query-timeout",
						"idempotency.in-flight.poll-interval");
			});
	}

	@Test
	void theFailureAnalysisExplainsTheRuleAndWhatToSet() {
		this.runner.withPropertyValues("idempotency.lease=1s", "idempotency.heartbeat-interval=500ms")
			.run((context) -> {
				FailureAnalysis analysis = new InvalidIdempotencySettingsFailureAnalyzer()
					.analyze(context.getStartupFailure());
				assertThat(analysis.getDescription()).startsWith("The Idempotency-Key settings are invalid: ")
					.contains("lets a retry take over an owner that is still running");
				assertThat(analysis.getAction())
					.isEqualTo("Set idempotency.lease to more than PT1.125S, or lower idempotency.heartbeat-interval.");
			});
	}

	private static ContextConsumer<AssertableApplicationContext> refused(String... parts) {
		return (context) -> assertThat(context).hasFailed()
			.getFailure()
			.rootCause()
			.isInstanceOf(InvalidIdempotencySettingsException.class)
			.message()
			.contains(parts);
	}

}
