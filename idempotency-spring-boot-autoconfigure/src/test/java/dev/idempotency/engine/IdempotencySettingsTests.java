package dev.idempotency.engine;

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
		assertThat(settings.lease()).isEqualTo(Duration.ofSeconds(30));
		assertThat(settings.heartbeatInterval()).isEqualTo(Duration.ofSeconds(10));
		assertThat(settings.clockSkew()).isEqualTo(Duration.ofMinutes(1));
		assertThat(settings.keyAgePolicy()).isEqualTo(IdempotencySettings.KeyAgePolicy.REJECT);
		assertThat(settings.inFlightWait()).isEqualTo(Duration.ofSeconds(2));
		assertThat(settings.inFlightPollInterval()).isEqualTo(Duration.ofMillis(50));
		assertThat(settings.inFlightStatus()).isEqualTo(IdempotencySettings.InFlightStatus.CONFLICT);
		assertThat(settings.inFlightRetryAfter()).isEqualTo(Duration.ofSeconds(1));
		assertThat(settings.failureMode()).isEqualTo(IdempotencySettings.FailureMode.FAIL_CLOSED);
		assertThat(settings.storeRetryAfter()).isEqualTo(Duration.ofSeconds(5));
		assertThat(settings.maxBodyBytes()).isEqualTo(1024 * 1024);
		assertThat(IdempotencySettings.defaults()).isEqualTo(settings);
	}

	@Test
	void toBuilderChangesOnlyWhatIsSet() {
		IdempotencySettings settings = IdempotencySettings.builder()
			.lifetime(Duration.ofMinutes(10))
			.failureMode(IdempotencySettings.FailureMode.FAIL_OPEN)
			.build();
		IdempotencySettings changed = settings.toBuilder().grace(Duration.ZERO).build();
		assertThat(changed.lifetime()).isEqualTo(Duration.ofMinutes(10));
		assertThat(changed.failureMode()).isEqualTo(IdempotencySettings.FailureMode.FAIL_OPEN);
		assertThat(changed.grace()).isZero();
		assertThat(changed.toBuilder().build()).isEqualTo(changed);
	}

	@Test
	void buildValidatesNamingTheProperty() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> IdempotencySettings.builder().lease(Duration.ofHours(1)).build())
			.withMessageContaining("idempotency.lease");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> IdempotencySettings.builder().inFlightPollInterval(Duration.ZERO).build())
			.withMessageContaining("idempotency.in-flight.poll-interval");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> IdempotencySettings.builder().maxBodyBytes(2L << 30).build())
			.withMessageContaining("idempotency.response.max-body-size must be from 0 to 1073741824 bytes");
	}

}
