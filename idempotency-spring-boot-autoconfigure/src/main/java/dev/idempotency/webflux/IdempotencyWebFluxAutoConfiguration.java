package dev.idempotency.webflux;

import dev.idempotency.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempotency.core.internal.IdempotencyEngine;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.web.reactive.DispatcherHandler;

/**
 * WebFlux applications. The HTTP door is Spring MVC's: on a WebFlux application a handler
 * with {@code @Idempotent} and no key expression would run on every retry, so the
 * start-up fails with an {@link UnprotectedIdempotentHandlersException} that names each
 * such handler (nothing is silently unprotected). A handler with a key expression is the
 * method door's, which protects it or refuses it at start-up as on any bean.
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = IdempotencyAutoConfiguration.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnClass(DispatcherHandler.class)
@ConditionalOnBean(IdempotencyEngine.class)
public final class IdempotencyWebFluxAutoConfiguration {

	@Bean
	static UnprotectedHandlersCheck idempotencyUnprotectedHandlersCheck(ListableBeanFactory beanFactory) {
		return new UnprotectedHandlersCheck(beanFactory);
	}

}
