package dev.idempotency.web;

import reactor.core.publisher.Mono;

import org.springframework.web.server.ServerWebExchange;

/**
 * Whom a key belongs to on a WebFlux application: the reactive counterpart of
 * {@link dev.idempotency.web.IdempotencyScopeResolver}. Two requests share a record only
 * if they have the same scope and key. Declare a bean of this type to replace the
 * default, {@link ServerPrincipalScopeResolver}.
 *
 * @since 0.1.0
 */
@FunctionalInterface
public interface ServerIdempotencyScopeResolver {

	/** The exchange's scope; an empty result is {@code anonymous}. */
	Mono<String> resolveScope(ServerWebExchange exchange);

}
