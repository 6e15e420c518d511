package dev.idempotency.web;

import java.net.URI;

import dev.idempotency.engine.IdempotencyError;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ProblemDetail;

/**
 * The one translation of an {@link IdempotencyError} into an RFC 9457
 * {@link ProblemDetail}, used by both front doors: {@code type} is the configured base
 * plus the cause's slug, with the cause's title, the status and the reason in words.
 */
public final class IdempotencyProblemDetails {

	private IdempotencyProblemDetails() {
	}

	/**
	 * The problem for this error.
	 * @param error why the request was refused
	 * @param typeBase the base of the {@code type} URIs
	 * ({@code idempotency.web.problem-type-base})
	 * @return a new problem detail, without an {@code instance}
	 */
	public static ProblemDetail of(IdempotencyError error, String typeBase) {
		ProblemDetail problem = ProblemDetail.forStatusAndDetail(HttpStatusCode.valueOf(error.status()),
				error.detail());
		problem.setType(URI.create(typeBase + error.type().slug()));
		problem.setTitle(error.type().title());
		return problem;
	}

}
