package dev.idempotency.autoconfigure;

import dev.idempotency.actuate.IdempotencyEndpoint;
import dev.idempotency.actuate.IdempotencyEndpointWebExtension;
import dev.idempotency.core.internal.IdempotencyEngine;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.autoconfigure.endpoint.expose.EndpointExposure;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * The {@link IdempotencyEndpoint} ({@code /actuator/idempotency}) and its web extension,
 * when Spring Boot Actuator is present and the endpoint is available: like Boot's own
 * endpoints, over HTTP only once {@code management.endpoints.web.exposure.include} names
 * {@code idempotency}.
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = IdempotencyAutoConfiguration.class)
@ConditionalOnClass({ Endpoint.class, ConditionalOnAvailableEndpoint.class })
@ConditionalOnBean(IdempotencyEngine.class)
public final class IdempotencyEndpointAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnAvailableEndpoint
	IdempotencyEndpoint idempotencyEndpoint(IdempotencyEngine engine,
			ObjectProvider<IdempotencyProperties> properties) {
		IdempotencyProperties idempotency = properties.getIfAvailable(IdempotencyProperties::new);
		return new IdempotencyEndpoint(engine.store(), idempotency.getKey().getFormat(),
				engine.settings().storeFailure().retryAfter(), idempotency.getWeb().getProblemTypeBase());
	}

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(IdempotencyEndpoint.class)
	@ConditionalOnAvailableEndpoint(exposure = EndpointExposure.WEB)
	IdempotencyEndpointWebExtension idempotencyEndpointWebExtension(IdempotencyEndpoint endpoint) {
		return new IdempotencyEndpointWebExtension(endpoint);
	}

}
