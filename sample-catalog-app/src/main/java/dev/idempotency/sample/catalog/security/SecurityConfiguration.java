package dev.idempotency.sample.catalog.security;

import dev.idempotency.sample.catalog.iceberg.SampleCatalogProperties;
import jakarta.servlet.http.HttpServletRequest;

import org.springframework.boot.actuate.autoconfigure.endpoint.web.WebEndpointProperties;
import org.springframework.boot.actuate.autoconfigure.web.server.ManagementPortType;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;
import org.springframework.core.env.Environment;

/**
 * Bearer-token authentication, when {@code catalog.auth.enabled=true}: the catalog routes
 * ({@code /v1/*}) take catalog tokens ({@code catalog.auth.tokens}), the actuator's
 * endpoints other than health take operator tokens
 * ({@code catalog.auth.operator-tokens}). The operator endpoints can read and remove any
 * principal's idempotency keys: a catalog principal is not an operator.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty(name = "catalog.auth.enabled", havingValue = "true")
public class SecurityConfiguration {

	/**
	 * Authenticate before anything (the idempotency door included) looks at the
	 * principal.
	 */
	private static final int ORDER = Ordered.HIGHEST_PRECEDENCE + 10;

	@Bean
	FilterRegistrationBean<BearerTokenFilter> bearerTokenFilter(SampleCatalogProperties properties) {
		SampleCatalogProperties.Auth auth = properties.getAuth();
		FilterRegistrationBean<BearerTokenFilter> registration = new FilterRegistrationBean<>(new BearerTokenFilter(
				"bearer token", auth.getTokens(), auth.getOperatorTokens().keySet(), request -> false));
		registration.addUrlPatterns("/v1/*");
		registration.setOrder(ORDER);
		return registration;
	}

	/**
	 * Operator tokens on the actuator's base path, health excepted (load balancers and
	 * orchestrators probe it without one). On a management port of its own the actuator
	 * runs in a child context that this filter does not reach: the start fails rather
	 * than leave the endpoints open.
	 */
	@Bean
	FilterRegistrationBean<BearerTokenFilter> operatorTokenFilter(SampleCatalogProperties properties,
			WebEndpointProperties endpoints, Environment environment) {
		if (ManagementPortType.get(environment) == ManagementPortType.DIFFERENT) {
			throw new IllegalStateException("catalog.auth.enabled=true secures the actuator on the server's own port"
					+ " only, and management.server.port puts it on another one, where its endpoints would be open to"
					+ " anyone: leave management.server.port unset (or set it to the server's port, or -1 to switch"
					+ " the actuator's web endpoints off)");
		}
		String basePath = endpoints.getBasePath();
		String health = basePath + "/" + endpoints.getPathMapping().getOrDefault("health", "health");
		SampleCatalogProperties.Auth auth = properties.getAuth();
		FilterRegistrationBean<BearerTokenFilter> registration = new FilterRegistrationBean<>(
				new BearerTokenFilter("operator token", auth.getOperatorTokens(), auth.getTokens().keySet(),
						request -> isUnder(path(request), health)));
		registration.addUrlPatterns(basePath, basePath + "/*");
		registration.setOrder(ORDER);
		return registration;
	}

	/**
	 * The path as the container mapped it: decoded and normalized, so that
	 * {@code /actuator/health/../idempotency} is not taken for health.
	 */
	private static String path(HttpServletRequest request) {
		String pathInfo = request.getPathInfo();
		return request.getServletPath() + ((pathInfo != null) ? pathInfo : "");
	}

	private static boolean isUnder(String path, String root) {
		return path.equals(root) || path.startsWith(root + "/");
	}

}
