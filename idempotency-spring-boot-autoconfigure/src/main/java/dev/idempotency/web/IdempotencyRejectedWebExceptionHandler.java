package dev.idempotency.web;

import dev.idempotency.IdempotencyRejectedException;
import reactor.core.publisher.Mono;

import org.springframework.core.Ordered;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebExceptionHandler;

/**
 * Answers an {@link IdempotencyRejectedException} that left a WebFlux handler (a refusal
 * of the method door: key reused, in flight, invalid key, store unavailable) with its own
 * status, {@code Retry-After} and problem body, as the door answers its own refusals,
 * instead of Boot's {@code 500}. Ordered before Boot's error handler; an application's
 * {@code @ExceptionHandler} (or {@code spring.webflux.problemdetails.enabled}) still
 * answers it first, in the handler's own exception handling.
 */
final class IdempotencyRejectedWebExceptionHandler implements WebExceptionHandler, Ordered {

	/** Before Boot's {@code DefaultErrorWebExceptionHandler} ({@code -1}). */
	static final int ORDER = -2;

	private final ServerRefusals refusals;

	IdempotencyRejectedWebExceptionHandler(ServerRefusals refusals) {
		this.refusals = refusals;
	}

	@Override
	public Mono<Void> handle(ServerWebExchange exchange, Throwable ex) {
		if (!(ex instanceof IdempotencyRejectedException rejected) || exchange.getResponse().isCommitted()) {
			return Mono.error(ex);
		}
		return this.refusals.refuse(exchange, rejected.error());
	}

	@Override
	public int getOrder() {
		return ORDER;
	}

}
