package dev.idempotency.autoconfigure;

import java.time.Duration;

import dev.idempotency.core.IdempotencySettings;
import org.junit.jupiter.api.Test;

import org.springframework.util.unit.DataSize;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The mapping of the idempotency.* properties onto the engine's settings, and its checks
 * in the properties' own names.
 */
class IdempotencyPropertiesTests {

	@Test
	void unsetPropertiesAreTheEnginesDefaults() {
		assertThat(new IdempotencyProperties().toSettings()).isEqualTo(IdempotencySettings.defaults());
	}

	@Test
	void eachPropertyReachesItsGroup() {
		IdempotencyProperties properties = new IdempotencyProperties();
		properties.setLease(Duration.ofSeconds(8));
		properties.setHeartbeatInterval(Duration.ofSeconds(3));
		properties.getInFlight().setWait(Duration.ZERO);
		properties.getInFlight().setPollInterval(Duration.ofMillis(7));
		properties.getInFlight().setStatus(IdempotencySettings.InFlightStatus.SERVICE_UNAVAILABLE);
		properties.getInFlight().setRetryAfter(Duration.ofSeconds(4));
		properties.getStore().setFailureMode(IdempotencySettings.FailureMode.FAIL_OPEN);
		properties.getStore().setRetryAfter(Duration.ofSeconds(9));
		properties.getResponse().setMaxBodySize(DataSize.ofKilobytes(64));
		IdempotencySettings settings = properties.toSettings();
		assertThat(settings.lease())
			.isEqualTo(new IdempotencySettings.Lease(Duration.ofSeconds(8), Duration.ofSeconds(3)));
		assertThat(settings.inFlight()).isEqualTo(new IdempotencySettings.InFlight(Duration.ZERO, Duration.ofMillis(7),
				IdempotencySettings.InFlightStatus.SERVICE_UNAVAILABLE, Duration.ofSeconds(4)));
		assertThat(settings.storeFailure()).isEqualTo(
				new IdempotencySettings.StoreFailure(IdempotencySettings.FailureMode.FAIL_OPEN, Duration.ofSeconds(9)));
		assertThat(settings.maxBodyBytes()).isEqualTo(64 * 1024);
	}

	@Test
	void toSettingsValidatesNamingTheProperty() {
		IdempotencyProperties longLease = new IdempotencyProperties();
		longLease.setLease(Duration.ofHours(1));
		assertThatExceptionOfType(InvalidIdempotencySettingsException.class).isThrownBy(longLease::toSettings)
			.withMessage("idempotency.lease (PT1H) must not be longer than idempotency.lifetime + idempotency.grace"
					+ " (PT35M): a record would expire while its owner still runs")
			.satisfies((ex) -> assertThat(ex.properties()).containsExactly("idempotency.lease", "idempotency.lifetime",
					"idempotency.grace"))
			.satisfies((ex) -> assertThat(ex.action()).isEqualTo(
					"Set idempotency.lease to at most PT35M or raise idempotency.lifetime or idempotency.grace."));

		IdempotencyProperties noPolling = new IdempotencyProperties();
		noPolling.getInFlight().setPollInterval(Duration.ZERO);
		assertThatExceptionOfType(InvalidIdempotencySettingsException.class).isThrownBy(noPolling::toSettings)
			.withMessage("idempotency.in-flight.poll-interval must be positive, was PT0S")
			.satisfies((ex) -> assertThat(ex.action())
				.isEqualTo("Set idempotency.in-flight.poll-interval to a positive duration, such as 10s."));

		IdempotencyProperties negativeRetryAfter = new IdempotencyProperties();
		negativeRetryAfter.getStore().setRetryAfter(Duration.ofSeconds(-1));
		assertThatExceptionOfType(InvalidIdempotencySettingsException.class).isThrownBy(negativeRetryAfter::toSettings)
			.withMessage("idempotency.store.retry-after must not be negative, was PT-1S")
			.satisfies((ex) -> assertThat(ex.action())
				.isEqualTo("Set idempotency.store.retry-after to 0 or a positive duration."));

		IdempotencyProperties hugeBodies = new IdempotencyProperties();
		hugeBodies.getResponse().setMaxBodySize(DataSize.ofGigabytes(2));
		assertThatExceptionOfType(InvalidIdempotencySettingsException.class).isThrownBy(hugeBodies::toSettings)
			.withMessageContaining("idempotency.response.max-body-size must be from 0 to 1073741824 bytes")
			.satisfies((ex) -> assertThat(ex.action())
				.isEqualTo("Set idempotency.response.max-body-size to at most 1GB; the default is 1MB."));
	}

	@Test
	void valuesAreWrittenInTheirLargestWholeUnit() {
		assertThat(PropertyValues.written(Duration.ofMinutes(30))).isEqualTo("30m");
		assertThat(PropertyValues.written(Duration.ofSeconds(90))).isEqualTo("90s");
		assertThat(PropertyValues.written(Duration.ofMillis(50))).isEqualTo("50ms");
		assertThat(PropertyValues.written(Duration.ofDays(2))).isEqualTo("2d");
		assertThat(PropertyValues.written(DataSize.ofMegabytes(1))).isEqualTo("1MB");
		assertThat(PropertyValues.written(DataSize.ofBytes(1L << 30))).isEqualTo("1GB");
		assertThat(PropertyValues.written(DataSize.ofBytes(1500))).isEqualTo("1500B");
	}

}
