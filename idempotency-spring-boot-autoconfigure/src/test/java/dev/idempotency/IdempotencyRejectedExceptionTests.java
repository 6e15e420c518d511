package dev.idempotency;

import java.time.Duration;

import dev.idempotency.core.IdempotencyError;
import dev.idempotency.core.IdempotencyErrorType;
import org.junit.jupiter.api.Test;

import org.springframework.http.ProblemDetail;
import org.springframework.web.ErrorResponse;

import static org.assertj.core.api.Assertions.assertThat;

class IdempotencyRejectedExceptionTests {

	@Test
	void eachCauseIsAnErrorResponseWithItsStatusAndProblem() {
		IdempotencyRejectedException reused = new IdempotencyRejectedException(
				IdempotencyError.of(IdempotencyErrorType.KEY_REUSED, "used for another call"), "urn:problems:");
		assertThat(reused).isInstanceOf(ErrorResponse.class);
		assertThat(reused.getStatusCode().value()).isEqualTo(422);
		ProblemDetail problem = reused.getBody();
		assertThat(problem.getType()).hasToString("urn:problems:key-reused");
		assertThat(problem.getTitle()).isEqualTo(IdempotencyErrorType.KEY_REUSED.title());
		assertThat(problem.getDetail()).isEqualTo("used for another call");
		assertThat(reused.getMessage()).isEqualTo(IdempotencyErrorType.KEY_REUSED.title() + ": used for another call");
		assertThat(new IdempotencyRejectedException(IdempotencyError.of(IdempotencyErrorType.REQUEST_IN_FLIGHT, "busy"),
				"urn:problems:")
			.getStatusCode()
			.value()).isEqualTo(409);
		assertThat(new IdempotencyRejectedException(IdempotencyError.of(IdempotencyErrorType.KEY_REQUIRED, "none"),
				"urn:problems:")
			.getStatusCode()
			.value()).isEqualTo(400);
	}

	@Test
	void aStoreOutageTellsWhenToRetry() {
		IdempotencyRejectedException unavailable = new IdempotencyRejectedException(
				new IdempotencyError(IdempotencyErrorType.STORE_UNAVAILABLE, 503, "store down", Duration.ofSeconds(5)),
				"urn:problems:");
		assertThat(unavailable.getStatusCode().value()).isEqualTo(503);
		assertThat(unavailable.getHeaders().getFirst("Retry-After")).isEqualTo("5");
	}

}
