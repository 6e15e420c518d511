package dev.idempotency.web;

import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import dev.idempotency.IdempotencyRejectedException;
import dev.idempotency.core.IdempotencyError;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.core.ResolvableType;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.codec.HttpMessageWriter;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;

/**
 * Answers the WebFlux door's refusals: with the application's
 * {@link ServerIdempotencyErrorRenderer} if it declares one, else as the Spring MVC door
 * does, RFC 9457 problem details ({@code application/problem+json}) written by the
 * application's own codecs, with {@code Retry-After} when the error has one.
 */
final class ServerRefusals {

	private static final ResolvableType PROBLEM = ResolvableType.forClass(ProblemDetail.class);

	private final Supplier<List<HttpMessageWriter<?>>> writers;

	private final @Nullable ServerIdempotencyErrorRenderer renderer;

	/**
	 * Looked up once every singleton exists: never on an event loop, nor under a lock.
	 */
	private volatile @Nullable List<HttpMessageWriter<?>> resolved;

	private final String problemTypeBase;

	ServerRefusals(Supplier<List<HttpMessageWriter<?>>> writers, @Nullable ServerIdempotencyErrorRenderer renderer,
			String problemTypeBase) {
		this.writers = writers;
		this.renderer = renderer;
		this.problemTypeBase = problemTypeBase;
	}

	/** The application's message writers. */
	List<HttpMessageWriter<?>> resolveWriters() {
		List<HttpMessageWriter<?>> writers = this.resolved;
		if (writers == null) {
			writers = List.copyOf(this.writers.get());
			this.resolved = writers;
		}
		return writers;
	}

	Mono<Void> refuse(ServerWebExchange exchange, IdempotencyError error) {
		IdempotencyRejectedException rejected = new IdempotencyRejectedException(error, this.problemTypeBase);
		ServerHttpResponse response = exchange.getResponse();
		response.setStatusCode(rejected.getStatusCode());
		String retryAfter = rejected.getHeaders().getFirst(HttpHeaders.RETRY_AFTER);
		if (retryAfter != null) {
			response.getHeaders().set(HttpHeaders.RETRY_AFTER, retryAfter);
		}
		if (this.renderer != null) {
			return this.renderer.render(error, exchange);
		}
		ProblemDetail problem = rejected.getBody();
		if (problem.getInstance() == null) {
			// The request's path, as on Spring MVC.
			try {
				problem.setInstance(URI.create(exchange.getRequest().getURI().getRawPath()));
			}
			catch (IllegalArgumentException ex) {
				// A path java.net.URI refuses alone: the problem goes without its
				// instance rather than without its body.
			}
		}
		return write(problem, exchange);
	}

	@SuppressWarnings("unchecked")
	private Mono<Void> write(ProblemDetail problem, ServerWebExchange exchange) {
		for (HttpMessageWriter<?> writer : resolveWriters()) {
			if (writer.canWrite(PROBLEM, MediaType.APPLICATION_PROBLEM_JSON)) {
				return ((HttpMessageWriter<ProblemDetail>) writer).write(Mono.just(problem), PROBLEM,
						MediaType.APPLICATION_PROBLEM_JSON, exchange.getResponse(), Map.of());
			}
		}
		return exchange.getResponse().setComplete();
	}

}
