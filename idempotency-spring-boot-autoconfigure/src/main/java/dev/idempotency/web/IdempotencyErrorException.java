package dev.idempotency.web;

import java.time.Duration;

import dev.idempotency.engine.IdempotencyError;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.web.ErrorResponseException;

/**
 * The HTTP front door refused a request: an {@link ErrorResponseException} whose body is
 * the RFC 9457 problem of {@link IdempotencyProblemDetails#of} and whose headers carry
 * {@code Retry-After} when the error has one. Thrown before the handler runs, so an
 * application's {@code @ControllerAdvice} (for example a
 * {@code ResponseEntityExceptionHandler}) can render it; unhandled, the
 * {@link IdempotencyErrorRenderer} answers it.
 */
public class IdempotencyErrorException extends ErrorResponseException {

	private final IdempotencyError error;

	public IdempotencyErrorException(IdempotencyError error, String typeBase) {
		super(HttpStatusCode.valueOf(error.status()), IdempotencyProblemDetails.of(error, typeBase), null);
		this.error = error;
		Duration retryAfter = error.retryAfter();
		if (retryAfter != null) {
			getHeaders().set(HttpHeaders.RETRY_AFTER, retryAfterSeconds(retryAfter));
		}
	}

	/** Why the request was refused. */
	public IdempotencyError error() {
		return this.error;
	}

	@Override
	public String getMessage() {
		return this.error.status() + " " + this.error.type().slug() + ": " + this.error.detail();
	}

	static String retryAfterSeconds(Duration retryAfter) {
		return Long.toString(Math.max(1, retryAfter.toSeconds()));
	}

}
