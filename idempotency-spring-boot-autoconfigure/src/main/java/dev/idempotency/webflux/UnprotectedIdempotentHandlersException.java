package dev.idempotency.webflux;

import java.util.List;

/**
 * WebFlux handler methods with {@code @Idempotent} and no key expression, which no door
 * of the starter protects on a WebFlux application: the start-up fails with them, for the
 * failure analyzer that reports them.
 */
@SuppressWarnings("serial")
class UnprotectedIdempotentHandlersException extends IllegalStateException {

	private final List<String> handlers;

	UnprotectedIdempotentHandlersException(List<String> handlers) {
		super("@Idempotent on WebFlux handlers that the starter does not protect (the HTTP door is Spring MVC's): "
				+ String.join("; ", handlers));
		this.handlers = List.copyOf(handlers);
	}

	/**
	 * Each handler, as {@code com.example.Orders.create(NewOrder) mapped to {POST
	 * [/orders]}}.
	 */
	List<String> handlers() {
		return this.handlers;
	}

}
