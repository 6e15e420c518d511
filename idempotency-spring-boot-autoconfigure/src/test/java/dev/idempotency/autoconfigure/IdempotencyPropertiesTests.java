package dev.idempotency.autoconfigure;

import java.time.Duration;

import dev.idempotency.autoconfigure.internal.IdempotencyStorePropertyValues;
import dev.idempotency.autoconfigure.internal.IdempotencyStoreTimeout;
import dev.idempotency.core.IdempotencySettings;
import org.junit.jupiter.api.Test;

import org.springframework.util.unit.DataSize;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The mapping of the idempotency.* properties onto the engine's settings, and their
 * checks in the properties' own names ({@link IdempotencyPropertiesValidator}).
 */
class IdempotencyPropertiesTests {

	@Test
	void unsetPropertiesAreTheEnginesDefaults() {
		IdempotencyProperties defaults = new IdempotencyProperties();
		IdempotencyPropertiesValidator.validate(defaults, new IdempotencyMemoryStoreProperties(), null, null);
		assertThat(IdempotencyAutoConfiguration.settings(defaults)).isEqualTo(IdempotencySettings.defaults());
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
		IdempotencySettings settings = IdempotencyAutoConfiguration.settings(properties);
		assertThat(settings.lease())
			.isEqualTo(new IdempotencySettings.Lease(Duration.ofSeconds(8), Duration.ofSeconds(3)));
		assertThat(settings.inFlight()).isEqualTo(new IdempotencySettings.InFlight(Duration.ZERO, Duration.ofMillis(7),
				IdempotencySettings.InFlightStatus.SERVICE_UNAVAILABLE, Duration.ofSeconds(4)));
		assertThat(settings.storeFailure()).isEqualTo(
				new IdempotencySettings.StoreFailure(IdempotencySettings.FailureMode.FAIL_OPEN, Duration.ofSeconds(9)));
		assertThat(settings.maxBodyBytes()).isEqualTo(64 * 1024);
	}

	@Test
	void theValidatorNamesTheProperty() {
		IdempotencyProperties longLease = new IdempotencyProperties();
		longLease.setLease(Duration.ofHours(1));
		assertThatExceptionOfType(InvalidIdempotencySettingsException.class).isThrownBy(() -> validate(longLease))
			.withMessage("idempotency.lease (PT1H) must not be longer than idempotency.lifetime + idempotency.grace"
					+ " (PT35M): a record would expire while its owner still runs")
			.satisfies((ex) -> assertThat(ex.properties()).containsExactly("idempotency.lease", "idempotency.lifetime",
					"idempotency.grace"))
			.satisfies((ex) -> assertThat(ex.action()).isEqualTo(
					"Set idempotency.lease to at most PT35M or raise idempotency.lifetime or idempotency.grace."));

		IdempotencyProperties noPolling = new IdempotencyProperties();
		noPolling.getInFlight().setPollInterval(Duration.ZERO);
		assertThatExceptionOfType(InvalidIdempotencySettingsException.class).isThrownBy(() -> validate(noPolling))
			.withMessage("idempotency.in-flight.poll-interval must be positive, was PT0S")
			.satisfies((ex) -> assertThat(ex.action()).isEqualTo(
					"Set idempotency.in-flight.poll-interval to a positive duration, or remove it for the default."));

		IdempotencyProperties negativeRetryAfter = new IdempotencyProperties();
		negativeRetryAfter.getStore().setRetryAfter(Duration.ofSeconds(-1));
		assertThatExceptionOfType(InvalidIdempotencySettingsException.class)
			.isThrownBy(() -> validate(negativeRetryAfter))
			.withMessage("idempotency.store.retry-after must not be negative, was PT-1S")
			.satisfies((ex) -> assertThat(ex.action())
				.isEqualTo("Set idempotency.store.retry-after to 0 or a positive duration."));

		IdempotencyProperties hugeBodies = new IdempotencyProperties();
		hugeBodies.getResponse().setMaxBodySize(DataSize.ofGigabytes(2));
		assertThatExceptionOfType(InvalidIdempotencySettingsException.class).isThrownBy(() -> validate(hugeBodies))
			.withMessageContaining("idempotency.response.max-body-size must be from 0 to 1073741824 bytes")
			.satisfies((ex) -> assertThat(ex.action())
				.isEqualTo("Set idempotency.response.max-body-size to at most 1GB; the default is 1MB."));
	}

	/**
	 * Every bad value is reported at once, each with its property, its value and what to
	 * set, instead of the first one alone.
	 */
	/**
	 * A header name no request can carry (a space in it, or none at all) would leave
	 * every request unprotected: refused at start-up.
	 */
	@Test
	void aHeaderNameThatIsNotAnHttpTokenIsRefused() {
		for (String name : new String[] { "Bad Header", "", "Idempotency-Key:", "Ключ" }) {
			IdempotencyProperties properties = new IdempotencyProperties();
			properties.setHeaderName(name);
			assertThatExceptionOfType(InvalidIdempotencySettingsException.class).isThrownBy(() -> validate(properties))
				.withMessage("idempotency.header-name must be an HTTP header name (letters, digits and"
						+ " !#$%&'*+-.^_`|~, no spaces), was '" + name + "'")
				.satisfies((ex) -> assertThat(ex.properties()).containsExactly("idempotency.header-name"));
		}
		IdempotencyProperties custom = new IdempotencyProperties();
		custom.setHeaderName("X-Request-Key");
		validate(custom);
	}

	@Test
	void everyBadValueIsReportedAtOnce() {
		IdempotencyProperties properties = new IdempotencyProperties();
		properties.setLifetime(Duration.ZERO);
		properties.setGrace(Duration.ofSeconds(-1));
		properties.setLease(Duration.ofSeconds(4));
		properties.setHeartbeatInterval(Duration.ofMillis(3500));
		properties.setClockSkew(Duration.ofSeconds(-2));
		properties.getInFlight().setWait(Duration.ofSeconds(-3));
		properties.getInFlight().setPollInterval(Duration.ZERO);
		properties.getInFlight().setRetryAfter(Duration.ofSeconds(-4));
		properties.getStore().setRetryAfter(Duration.ofSeconds(-5));
		properties.getResponse().setMaxBodySize(DataSize.ofGigabytes(2));
		properties.getRequest().setMaxBodySize(DataSize.ofBytes(-1));
		IdempotencyMemoryStoreProperties memory = new IdempotencyMemoryStoreProperties();
		memory.setMaxEntries(0);
		memory.setMaxBytes(DataSize.ofBytes(0));
		memory.setMaxSharePerScope(1.5);
		assertThatExceptionOfType(InvalidIdempotencySettingsException.class)
			.isThrownBy(() -> IdempotencyPropertiesValidator.validate(properties, memory, null, null))
			.satisfies((ex) -> assertThat(ex.problems())
				.extracting(InvalidIdempotencySettingsException.Problem::message)
				.containsExactly("idempotency.lifetime must be positive, was PT0S",
						"idempotency.grace must not be negative, was PT-1S",
						"idempotency.heartbeat-interval (PT3.5S) must be at most half of idempotency.lease (PT4S):"
								+ " a running owner's beats are up to one heartbeat-interval apart, and the rest of the"
								+ " lease is the margin for the store round trip and a late heartbeat thread",
						"idempotency.clock-skew must not be negative, was PT-2S",
						"idempotency.in-flight.wait must not be negative, was PT-3S",
						"idempotency.in-flight.poll-interval must be positive, was PT0S",
						"idempotency.in-flight.retry-after must not be negative, was PT-4S",
						"idempotency.store.retry-after must not be negative, was PT-5S",
						"idempotency.response.max-body-size must be from 0 to 1073741824 bytes (an answer is held in"
								+ " memory until it is stored), was 2147483648 bytes",
						"idempotency.request.max-body-size must be zero or more, was -1B",
						"idempotency.store.memory.max-bytes must be positive, was 0B",
						"idempotency.store.memory.max-entries must be positive, was 0",
						"idempotency.store.memory.max-share-per-scope must be more than 0 and at most 1, was 1.5"))
			.satisfies((ex) -> assertThat(ex.getMessage()).startsWith("13 problems: idempotency.lifetime must be"))
			.satisfies((ex) -> assertThat(ex.properties()).contains("idempotency.lifetime", "idempotency.lease",
					"idempotency.store.memory.max-share-per-scope"))
			.satisfies((ex) -> assertThat(ex.action().lines()).hasSize(13)
				.contains("Set idempotency.lifetime to a positive duration, or remove it for the default."));
	}

	/** The lease is compared with the store's timeout only when both are known. */
	@Test
	void aStoreWithoutTimeoutIsReportedInLeaseModeOnly() {
		IdempotencyStoreTimeout none = new IdempotencyStoreTimeout("idempotency.store.jdbc.query-timeout",
				Duration.ZERO, Duration.ofSeconds(2));
		assertThatExceptionOfType(InvalidIdempotencySettingsException.class)
			.isThrownBy(() -> IdempotencyPropertiesValidator.validate(new IdempotencyProperties(), null, none, null))
			.withMessageStartingWith("idempotency.store.jdbc.query-timeout is PT0S (none)")
			.satisfies((ex) -> assertThat(ex.action())
				.isEqualTo("Set idempotency.store.jdbc.query-timeout to a positive duration (the default is 2s)."));
		IdempotencyProperties recordAfterSuccess = new IdempotencyProperties();
		recordAfterSuccess.setMode(IdempotencySettings.Mode.RECORD_AFTER_SUCCESS);
		IdempotencyPropertiesValidator.validate(recordAfterSuccess, null, none, null);
	}

	/** The JDBC store's own properties are reported with the rest, each by its name. */
	@Test
	void theJdbcStoresPropertiesAreReportedWithTheRest() {
		IdempotencyProperties properties = new IdempotencyProperties();
		properties.setLifetime(Duration.ZERO);
		IdempotencyStorePropertyValues.Jdbc jdbc = new IdempotencyStorePropertyValues.Jdbc(true, Duration.ZERO, 0, true,
				"MARIADB");
		assertThatExceptionOfType(InvalidIdempotencySettingsException.class)
			.isThrownBy(() -> IdempotencyPropertiesValidator.validate(properties, null, null, jdbc))
			.satisfies((ex) -> assertThat(ex.problems())
				.extracting(InvalidIdempotencySettingsException.Problem::message)
				.containsExactly("idempotency.lifetime must be positive, was PT0S",
						"idempotency.store.jdbc.purge.interval must be positive, was PT0S",
						"idempotency.store.jdbc.purge.batch-size must be at least 1 (records one DELETE removes), was 0",
						"idempotency.store.jdbc.postgresql.reserve-asynchronous-commit=on needs PostgreSQL, but"
								+ " idempotency.store.jdbc.dialect is MARIADB"))
			.satisfies((ex) -> assertThat(ex.properties()).contains("idempotency.store.jdbc.purge.interval",
					"idempotency.store.jdbc.purge.batch-size",
					"idempotency.store.jdbc.postgresql.reserve-asynchronous-commit", "idempotency.store.jdbc.dialect"));
		// A purge that is off is not checked; a detected dialect is checked once known.
		IdempotencyPropertiesValidator.validate(new IdempotencyProperties(), null, null,
				new IdempotencyStorePropertyValues.Jdbc(false, Duration.ZERO, 0, true, null));
	}

	/** The Redis store's acknowledgement settings are reported with the rest. */
	@Test
	void theRedisStoresAcknowledgementSettingsAreReportedWithTheRest() {
		assertThatExceptionOfType(InvalidIdempotencySettingsException.class)
			.isThrownBy(() -> IdempotencyPropertiesValidator.validate(new IdempotencyProperties(), null, null,
					new IdempotencyStorePropertyValues.Redis(-1, Duration.ofMillis(500))))
			.withMessage("idempotency.store.redis.replicas-to-ack must not be negative, was -1");
		assertThatExceptionOfType(InvalidIdempotencySettingsException.class)
			.isThrownBy(() -> IdempotencyPropertiesValidator.validate(new IdempotencyProperties(), null, null,
					new IdempotencyStorePropertyValues.Redis(1, Duration.ZERO)))
			.withMessage("idempotency.store.redis.replicas-ack-timeout must be positive when"
					+ " idempotency.store.redis.replicas-to-ack is 1, was PT0S: a WAIT with a timeout of 0 blocks for ever")
			.satisfies((ex) -> assertThat(ex.properties()).containsExactly(
					"idempotency.store.redis.replicas-ack-timeout", "idempotency.store.redis.replicas-to-ack"));
		// Without replicas to wait for, the timeout is not used.
		IdempotencyPropertiesValidator.validate(new IdempotencyProperties(), null, null,
				new IdempotencyStorePropertyValues.Redis(0, Duration.ZERO));
	}

	private static void validate(IdempotencyProperties properties) {
		IdempotencyPropertiesValidator.validate(properties, null, null, null);
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
