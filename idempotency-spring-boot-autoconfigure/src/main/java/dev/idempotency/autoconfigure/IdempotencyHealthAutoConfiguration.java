package dev.idempotency.autoconfigure;

import dev.idempotency.core.internal.IdempotencyEngine;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;

/**
 * The health indicator of the engine's store ({@code idempotency}), when Spring Boot's
 * health support is present, an engine is there, and
 * {@code management.health.idempotency.enabled} is not {@code false}.
 *
 * @since 0.2.0
 */
@AutoConfiguration(after = IdempotencyAutoConfiguration.class)
@ConditionalOnClass({ HealthIndicator.class, ConditionalOnEnabledHealthIndicator.class })
@ConditionalOnBean(IdempotencyEngine.class)
@ConditionalOnEnabledHealthIndicator("idempotency")
public final class IdempotencyHealthAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(name = "idempotencyHealthIndicator")
	IdempotencyStoreHealthIndicator idempotencyHealthIndicator(IdempotencyEngine engine) {
		return new IdempotencyStoreHealthIndicator(engine.store());
	}

}
