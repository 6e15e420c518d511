package dev.idempotency.sample.catalog.security;

import dev.idempotency.sample.catalog.iceberg.SampleCatalogProperties;

import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.Ordered;

/**
 * Bearer-token authentication of the catalog routes, when
 * {@code catalog.auth.enabled=true}.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty(name = "catalog.auth.enabled", havingValue = "true")
public class SecurityConfiguration {

	@Bean
	FilterRegistrationBean<BearerTokenFilter> bearerTokenFilter(SampleCatalogProperties properties) {
		FilterRegistrationBean<BearerTokenFilter> registration = new FilterRegistrationBean<>(
				new BearerTokenFilter(properties.getAuth().getTokens()));
		registration.addUrlPatterns("/v1/*");
		// Authenticate before anything (the idempotency door included) looks at the
		// principal.
		registration.setOrder(Ordered.HIGHEST_PRECEDENCE + 10);
		return registration;
	}

}
