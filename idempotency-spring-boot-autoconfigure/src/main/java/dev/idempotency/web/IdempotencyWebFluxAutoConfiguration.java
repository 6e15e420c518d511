package dev.idempotency.web;

import java.util.List;

import dev.idempotency.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempotency.autoconfigure.IdempotencyProperties;
import dev.idempotency.core.internal.IdempotencyEngine;
import reactor.core.scheduler.Schedulers;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.http.codec.HttpMessageWriter;
import org.springframework.http.codec.ServerCodecConfigurer;
import org.springframework.util.function.SingletonSupplier;
import org.springframework.web.reactive.DispatcherHandler;
import org.springframework.web.reactive.HandlerMapping;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping;
import org.springframework.web.server.WebFilter;

/**
 * The HTTP front door for WebFlux: a {@link WebFilter} with the Spring MVC door's
 * properties and answers (see {@link IdempotencyWebFilter}), the replaceable
 * {@link ServerIdempotencyScopeResolver} and, when the application declares one, its
 * {@link ServerIdempotencyErrorRenderer}. The engine's calls of a blocking store (JDBC,
 * Redis) run on Reactor's bounded elastic scheduler, never on the event loop; the
 * in-memory store's on the caller's thread.
 *
 * @since 0.1.0
 */
@AutoConfiguration(after = IdempotencyAutoConfiguration.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
@ConditionalOnClass(DispatcherHandler.class)
@ConditionalOnBean(IdempotencyEngine.class)
public final class IdempotencyWebFluxAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	ServerIdempotencyScopeResolver serverIdempotencyScopeResolver() {
		return new ServerPrincipalScopeResolver();
	}

	@Bean
	WebFilter idempotencyWebFilter(IdempotencyEngine engine, IdempotencyProperties properties,
			ServerIdempotencyScopeResolver scopeResolver, ObjectProvider<ServerIdempotencyErrorRenderer> renderer,
			ObjectProvider<RequestMappingHandlerMapping> mappings, ObjectProvider<ServerCodecConfigurer> codecs) {
		WebDoorSettings settings = WebDoorSettings.of(properties);
		ServerRefusals refusals = new ServerRefusals(
				SingletonSupplier.of(() -> writers(codecs.getIfAvailable(ServerCodecConfigurer::create))),
				renderer.getIfAvailable(), settings.problemTypeBase());
		return new IdempotencyWebFilter(engine,
				SingletonSupplier.of(() -> mappings.orderedStream().map(HandlerMapping.class::cast).toList()),
				scopeResolver, refusals, settings, Schedulers.boundedElastic());
	}

	private static List<HttpMessageWriter<?>> writers(ServerCodecConfigurer codecs) {
		return codecs.getWriters();
	}

}
