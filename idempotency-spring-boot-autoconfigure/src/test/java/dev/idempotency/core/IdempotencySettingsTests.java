package dev.idempotency.core;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class IdempotencySettingsTests {

	@Test
	void theBuilderStartsFromTheDocumentedDefaults() {
		IdempotencySettings settings = IdempotencySettings.builder().build();
		assertThat(settings.lifetime()).isEqualTo(Duration.ofMinutes(30));
		assertThat(settings.grace()).isEqualTo(Duration.ofMinutes(5));
		assertThat(settings.lease())
			.isEqualTo(new IdempotencySettings.Lease(Duration.ofSeconds(30), Duration.ofSeconds(10)));
		assertThat(settings.clockSkew()).isEqualTo(Duration.ofMinutes(1));
		assertThat(settings.keyAgePolicy()).isEqualTo(IdempotencySettings.KeyAgePolicy.REJECT);
		assertThat(settings.inFlight()).isEqualTo(new IdempotencySettings.InFlight(Duration.ofSeconds(2),
				Duration.ofMillis(50), IdempotencySettings.InFlightStatus.CONFLICT, Duration.ofSeconds(1)));
		assertThat(settings.storeFailure()).isEqualTo(new IdempotencySettings.StoreFailure(
				IdempotencySettings.FailureMode.FAIL_CLOSED, Duration.ofSeconds(5)));
		assertThat(settings.maxBodyBytes()).isEqualTo(1024 * 1024);
		assertThat(settings.mode()).isEqualTo(IdempotencySettings.Mode.LEASE);
		assertThat(IdempotencySettings.defaults()).isEqualTo(settings);
	}

	@Test
	void theBuilderFillsEachGroup() {
		IdempotencySettings settings = IdempotencySettings.builder()
			.lease(Duration.ofSeconds(8))
			.heartbeatInterval(Duration.ofSeconds(3))
			.inFlightWait(Duration.ZERO)
			.inFlightPollInterval(Duration.ofMillis(7))
			.inFlightStatus(IdempotencySettings.InFlightStatus.SERVICE_UNAVAILABLE)
			.inFlightRetryAfter(Duration.ofSeconds(4))
			.failureMode(IdempotencySettings.FailureMode.FAIL_OPEN)
			.storeRetryAfter(Duration.ofSeconds(9))
			.build();
		assertThat(settings.lease())
			.isEqualTo(new IdempotencySettings.Lease(Duration.ofSeconds(8), Duration.ofSeconds(3)));
		assertThat(settings.inFlight()).isEqualTo(new IdempotencySettings.InFlight(Duration.ZERO, Duration.ofMillis(7),
				IdempotencySettings.InFlightStatus.SERVICE_UNAVAILABLE, Duration.ofSeconds(4)));
		assertThat(settings.storeFailure()).isEqualTo(
				new IdempotencySettings.StoreFailure(IdempotencySettings.FailureMode.FAIL_OPEN, Duration.ofSeconds(9)));
		assertThat(settings.toBuilder().build()).isEqualTo(settings);
	}

	@Test
	void toBuilderChangesOnlyWhatIsSet() {
		IdempotencySettings settings = IdempotencySettings.builder()
			.lifetime(Duration.ofMinutes(10))
			.failureMode(IdempotencySettings.FailureMode.FAIL_OPEN)
			.build();
		IdempotencySettings changed = settings.toBuilder().grace(Duration.ZERO).build();
		assertThat(changed.lifetime()).isEqualTo(Duration.ofMinutes(10));
		assertThat(changed.storeFailure().mode()).isEqualTo(IdempotencySettings.FailureMode.FAIL_OPEN);
		assertThat(changed.grace()).isZero();
		assertThat(changed.toBuilder().build()).isEqualTo(changed);
	}

	/**
	 * The engine names its own values; which property sets them is the
	 * auto-configuration's business (IdempotencyPropertiesTests).
	 */
	@Test
	void buildValidatesNamingTheValueInTheEnginesTerms() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> IdempotencySettings.builder().lease(Duration.ofHours(1)).build())
			.withMessage("lease (PT1H) must not be longer than lifetime + grace (PT35M): a record would expire"
					+ " while its owner still runs");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> IdempotencySettings.builder().heartbeatInterval(Duration.ofSeconds(16)).build())
			.withMessageStartingWith("heartbeatInterval (PT16S) must be at most half of lease (PT30S)");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> IdempotencySettings.builder().inFlightPollInterval(Duration.ZERO).build())
			.withMessage("inFlight.pollInterval must be positive, was PT0S");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> IdempotencySettings.builder().storeRetryAfter(Duration.ofSeconds(-1)).build())
			.withMessage("storeFailure.retryAfter must not be negative, was PT-1S");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> IdempotencySettings.builder().maxBodyBytes(2L << 30).build())
			.withMessageStartingWith("maxBodyBytes must be from 0 to 1073741824");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> IdempotencySettings.builder().clockSkew(Duration.ofSeconds(-1)).build())
			.withMessage("clockSkew must not be negative, was PT-1S");
	}

	@Test
	void eachGroupValidatesOnItsOwn() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new IdempotencySettings.Lease(Duration.ofSeconds(4), Duration.ofMillis(2_001)))
			.withMessageStartingWith("heartbeatInterval (PT2.001S) must be at most half of lease (PT4S)");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new IdempotencySettings.InFlight(Duration.ofSeconds(-1), Duration.ofMillis(50),
					IdempotencySettings.InFlightStatus.CONFLICT, Duration.ZERO))
			.withMessage("inFlight.maxWait must not be negative, was PT-1S");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> new IdempotencySettings.StoreFailure(IdempotencySettings.FailureMode.FAIL_CLOSED, null))
			.withMessage("storeFailure.retryAfter must not be negative, was null");
	}

}
