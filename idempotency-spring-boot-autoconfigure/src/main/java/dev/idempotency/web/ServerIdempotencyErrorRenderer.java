package dev.idempotency.web;

import dev.idempotency.core.IdempotencyError;
import reactor.core.publisher.Mono;

import org.springframework.web.server.ServerWebExchange;

/**
 * Answers the WebFlux door's refusals in your API's own error shape instead of RFC 9457
 * problem details: the reactive counterpart of
 * {@link dev.idempotency.web.IdempotencyErrorRenderer}; declare a bean of this type.
 * Implementations set the status, the body and its content type; the caller has already
 * set {@code Retry-After} when the error carries one.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface ServerIdempotencyErrorRenderer {

	Mono<Void> render(IdempotencyError error, ServerWebExchange exchange);

}
