package dev.idempotency.web;

import java.security.Principal;

import reactor.core.publisher.Mono;

import org.springframework.util.ClassUtils;
import org.springframework.web.server.ServerWebExchange;

/**
 * The default scope on a WebFlux application, as {@link PrincipalScopeResolver}'s on
 * Spring MVC: the name of the exchange's principal (Spring Security's reactive
 * authentication, when a {@code SecurityWebFilterChain} authenticated the exchange),
 * prefixed {@code user:}, else {@code anonymous}; an anonymous authentication counts as
 * none. The same principal has the same scope on both stacks.
 *
 * @since 0.1.0
 */
public class ServerPrincipalScopeResolver implements ServerIdempotencyScopeResolver {

	private static final boolean SPRING_SECURITY_PRESENT = ClassUtils.isPresent(
			"org.springframework.security.authentication.AnonymousAuthenticationToken",
			ServerPrincipalScopeResolver.class.getClassLoader());

	@Override
	public Mono<String> resolveScope(ServerWebExchange exchange) {
		return exchange.getPrincipal()
			.filter(ServerPrincipalScopeResolver::isAuthenticated)
			.map((principal) -> "user:" + principal.getName())
			.defaultIfEmpty(PrincipalScopeResolver.ANONYMOUS);
	}

	private static boolean isAuthenticated(Principal principal) {
		return !SPRING_SECURITY_PRESENT || SpringSecurity.isAuthenticated(principal);
	}

	/** Kept apart so the class loads only with Spring Security on the classpath. */
	private static final class SpringSecurity {

		static boolean isAuthenticated(Principal principal) {
			if (principal instanceof org.springframework.security.core.Authentication authentication) {
				return authentication.isAuthenticated()
						&& !(authentication instanceof org.springframework.security.authentication.AnonymousAuthenticationToken);
			}
			return true;
		}

	}

}
