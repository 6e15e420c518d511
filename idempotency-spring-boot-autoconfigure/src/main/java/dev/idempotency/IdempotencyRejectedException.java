package dev.idempotency;

import java.net.URI;

import dev.idempotency.core.IdempotencyError;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ProblemDetail;
import org.springframework.web.ErrorResponseException;

/**
 * An idempotency key refused a call or a request instead of running it: the key is
 * invalid or missing, was reused with another request, is still in flight, the body is
 * too large to fingerprint, or the store is unavailable. {@link #error()} says which.
 * Both front doors throw it: the HTTP door before the handler runs, the method door
 * ({@link Idempotent @Idempotent} with a key expression) instead of running the method,
 * inside a web request or not.
 * <p>
 * As an {@link org.springframework.web.ErrorResponse} it carries the status to answer
 * with ({@code 400}, {@code 413}, {@code 422}, {@code 409}, or {@code 503}), the RFC 9457
 * problem (a {@code type} per cause, its title, the status and the reason in
 * {@code detail}) and, when the error has one, the {@code Retry-After} header. An
 * application's {@code @ExceptionHandler} or {@code ResponseEntityExceptionHandler} may
 * answer it; unhandled, Spring MVC answers it as {@code application/problem+json}.
 *
 * @since 0.1.0
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
		super(HttpStatusCode.valueOf(error.status()), problem(error, problemTypeBase), null);
		this.error = error;
		if (error.retryAfter() != null) {
			// Whole seconds, at least one: a client that reads 0 would retry at once.
			getHeaders().set(HttpHeaders.RETRY_AFTER, Long.toString(Math.max(1, error.retryAfter().toSeconds())));
		}
	}

	private static ProblemDetail problem(IdempotencyError error, String problemTypeBase) {
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatusCode.valueOf(error.status()),
				error.detail());
		problem.setType(URI.create(problemTypeBase + error.type().slug()));
		problem.setTitle(error.type().title());
		return problem;
	}

	/** Why the call was refused. */
	public IdempotencyError error() {
		return this.error;
	}

	@Override
	public String getMessage() {
		return this.error.type().title() + ": " + this.error.detail();
	}

}
