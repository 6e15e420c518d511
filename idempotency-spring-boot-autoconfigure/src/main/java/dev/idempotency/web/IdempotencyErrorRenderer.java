package dev.idempotency.web;

import java.io.IOException;

import dev.idempotency.engine.IdempotencyError;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

/**
 * Writes an idempotency error to the HTTP response. The default writes RFC 9457
 * {@code application/problem+json}; declare a bean of this type to answer in your API's
 * own error shape. Implementations set the status, the body and its content type; the
 * caller has already set {@code Retry-After} when the error carries one.
 */
@FunctionalInterface
public interface IdempotencyErrorRenderer {

	void render(IdempotencyError error, HttpServletRequest request, HttpServletResponse response) throws IOException;

}
