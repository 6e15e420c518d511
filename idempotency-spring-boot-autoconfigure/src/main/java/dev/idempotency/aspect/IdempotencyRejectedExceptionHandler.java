package dev.idempotency.aspect;

import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.bind.annotation.ExceptionHandler;

/**
 * Answers an {@link IdempotencyRejectedException} that reaches Spring MVC with its
 * status, headers and problem body ({@code application/problem+json}, {@code instance}
 * the request path), as the HTTP front door answers its own errors: an expected refusal,
 * not a server error, so nothing is logged. Last in order, so an application's own
 * handler for it wins.
 */
@ControllerAdvice
@Order(Ordered.LOWEST_PRECEDENCE)
public class IdempotencyRejectedExceptionHandler {

	@ExceptionHandler
	ResponseEntity<ProblemDetail> handleRejected(IdempotencyRejectedException ex) {
		return ResponseEntity.status(ex.getStatusCode()).headers(ex.getHeaders()).body(ex.getBody());
	}

}
