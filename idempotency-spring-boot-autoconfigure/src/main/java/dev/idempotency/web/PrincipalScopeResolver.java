package dev.idempotency.web;

import java.security.Principal;

import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;
import org.springframework.util.ClassUtils;

/**
 * The default scope: the name of Spring Security's authenticated principal when Spring
 * Security is present and the request is authenticated, else the servlet user principal,
 * else {@code anonymous}. Names are prefixed ({@code user:}) so that no name can collide
 * with the anonymous scope.
 *
 * @since 0.1.0
 */
public class PrincipalScopeResolver implements IdempotencyScopeResolver {

	/** The scope of requests with no principal. */
	public static final String ANONYMOUS = "anonymous";

	private static final boolean SPRING_SECURITY_PRESENT = ClassUtils.isPresent(
			"org.springframework.security.core.context.SecurityContextHolder",
			PrincipalScopeResolver.class.getClassLoader());

	@Override
	public String resolveScope(HttpServletRequest request) {
		String name = SPRING_SECURITY_PRESENT ? SpringSecurityPrincipal.currentName() : null;
		if (name == null) {
			Principal principal = request.getUserPrincipal();
			name = (principal != null) ? principal.getName() : null;
		}
		return (name != null) ? "user:" + name : ANONYMOUS;
	}

	/** Kept apart so the class loads only with Spring Security on the classpath. */
	private static final class SpringSecurityPrincipal {

		static @Nullable String currentName() {
			org.springframework.security.core.Authentication authentication = org.springframework.security.core.context.SecurityContextHolder
				.getContext()
				.getAuthentication();
			if (authentication == null || !authentication.isAuthenticated()
					|| authentication instanceof org.springframework.security.authentication.AnonymousAuthenticationToken) {
				return null;
			}
			return authentication.getName();
		}

	}

}
