package dev.idempotency.web;

import java.io.IOException;

import dev.idempotency.core.IdempotencyError;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

/**
 * Answers idempotency refusals in your API's own error shape instead of RFC 9457 problem
 * details: declare a bean of this type. It then answers every refusal of both doors that
 * reaches Spring MVC, before any {@code @ExceptionHandler} or {@code @ControllerAdvice}
 * (you chose how they look), and the HTTP door's refusals written outside Spring MVC.
 * Implementations set the status, the body and its content type; the caller has already
 * set {@code Retry-After} when the error carries one.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface IdempotencyErrorRenderer {

	void render(IdempotencyError error, HttpServletRequest request, HttpServletResponse response) throws IOException;

}
