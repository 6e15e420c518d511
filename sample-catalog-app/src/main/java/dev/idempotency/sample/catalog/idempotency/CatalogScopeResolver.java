package dev.idempotency.sample.catalog.idempotency;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.util.Map;
import java.util.Set;

import dev.idempotency.web.IdempotencyScopeResolver;
import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

import org.springframework.web.servlet.HandlerMapping;

/**
 * A key belongs to the authenticated principal and the catalog prefix of the route: the
 * same key sent by another principal, or to another prefix, is another request.
 */
public class CatalogScopeResolver implements IdempotencyScopeResolver {

	/** First segments after {@code /v1/} that are routes, not a prefix. */
	private static final Set<String> UNPREFIXED_ROOTS = Set.of("config", "oauth", "namespaces", "tables", "views",
			"transactions");

	@Override
	public String resolveScope(HttpServletRequest request) {
		Principal principal = request.getUserPrincipal();
		String name = (principal != null) ? principal.getName() : "anonymous";
		String prefix = prefix(request);
		return "principal=" + encode(name) + ";prefix=" + ((prefix != null) ? encode(prefix) : "");
	}

	private static @Nullable String prefix(HttpServletRequest request) {
		// Set once Spring MVC has matched the route (the HTTP interceptor runs after
		// that).
		if (request.getAttribute(HandlerMapping.URI_TEMPLATE_VARIABLES_ATTRIBUTE) instanceof Map<?, ?> variables) {
			Object prefix = variables.get("prefix");
			return (prefix != null) ? prefix.toString() : null;
		}
		// Earlier than that (a servlet filter): read it off the path.
		String path = request.getRequestURI().substring(request.getContextPath().length());
		String[] segments = path.split("/");
		if (segments.length > 3 && "v1".equals(segments[1]) && !UNPREFIXED_ROOTS.contains(segments[2])) {
			return segments[2];
		}
		return null;
	}

	private static String encode(String value) {
		return URLEncoder.encode(value, StandardCharsets.UTF_8);
	}

}
