package dev.idempotency.aspect;

import dev.idempotency.engine.IdempotencyError;
import dev.idempotency.web.IdempotencyProblemDetails;
import org.springframework.http.HttpStatusCode;
import org.springframework.web.ErrorResponseException;

/**
 * Thrown by an {@link dev.idempotency.Idempotent @Idempotent} bean method instead of
 * running it: the key is invalid or missing, was reused with other arguments, is still in
 * flight, or the store is unavailable. {@link #error()} says which. As an
 * {@link org.springframework.web.ErrorResponse} it carries the status an HTTP caller is
 * answered with ({@code 400}, {@code 422}, {@code 409} or {@code 503} with
 * {@code Retry-After}) and the same RFC 9457 problem body as the HTTP front door's
 * errors, so Spring MVC renders it as such instead of a {@code 500}.
 */
public class IdempotencyRejectedException extends ErrorResponseException {

	/** The default base of the problem {@code type} URIs. */
	public static final String DEFAULT_PROBLEM_TYPE_BASE = "https://idempotency.dev/problems/";

	private final transient IdempotencyError error;

	public IdempotencyRejectedException(IdempotencyError error) {
		this(error, DEFAULT_PROBLEM_TYPE_BASE);
	}

	/**
	 * @param error why the call was refused
	 * @param problemTypeBase the base of the problem {@code type} URIs
	 * ({@code idempotency.web.problem-type-base})
	 */
	public IdempotencyRejectedException(IdempotencyError error, String problemTypeBase) {
		super(HttpStatusCode.valueOf(error.status()), IdempotencyProblemDetails.of(error, problemTypeBase), null);
		if (error.retryAfter() != null) {
			getHeaders().set("Retry-After", Long.toString(Math.max(1, error.retryAfter().toSeconds())));
		}
		this.error = error;
	}

	public IdempotencyError error() {
		return this.error;
	}

	@Override
	public String getMessage() {
		return this.error.type().title() + ": " + this.error.detail();
	}

}
