package dev.idempotency.sample.catalog.idempotency;

import dev.idempotency.autoconfigure.IdempotencyProperties;
import dev.idempotency.web.IdempotencyErrorRenderer;
import dev.idempotency.web.IdempotencyScopeResolver;

import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * How the catalog plugs into the Idempotency-Key starter: its error shape and its key
 * scope.
 */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(IdempotencyProperties.class)
public class CatalogIdempotencyConfiguration {

	@Bean
	IdempotencyErrorRenderer icebergIdempotencyErrorRenderer() {
		return new IcebergIdempotencyErrorRenderer();
	}

	@Bean
	IdempotencyScopeResolver catalogScopeResolver() {
		return new CatalogScopeResolver();
	}

}
