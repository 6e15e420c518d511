package dev.idempotency.web;

import java.util.List;

import dev.idempotency.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempotency.autoconfigure.IdempotencyProperties;
import dev.idempotency.core.internal.IdempotencyEngine;
import dev.idempotency.store.r2dbc.R2dbcIdempotencyStore;
import dev.idempotency.store.seal.SealingStore;
import dev.idempotency.store.jdbc.JdbcIdempotencyStore;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.scheduler.Schedulers;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.codec.HttpMessageWriter;
import org.springframework.http.codec.ServerCodecConfigurer;
import org.springframework.util.ClassUtils;
import org.springframework.web.reactive.DispatcherHandler;
import org.springframework.web.reactive.HandlerMapping;
import org.springframework.web.reactive.function.server.support.ServerResponseResultHandler;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping;
import org.springframework.web.server.WebExceptionHandler;
import org.springframework.web.server.WebFilter;

/**
 * The HTTP front door for WebFlux: a {@link WebFilter} with the Spring MVC door's
 * properties and answers (see {@link IdempotencyWebFilter}), the
 * {@link IdempotencyHandlerFilterFunction} a functional route adds, the replaceable
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

	private static final Log logger = LogFactory.getLog(IdempotencyWebFluxAutoConfiguration.class);

	private static final boolean JDBC_STORE_PRESENT = ClassUtils.isPresent(
			"org.springframework.jdbc.core.simple.JdbcClient",
			IdempotencyWebFluxAutoConfiguration.class.getClassLoader());

	@Bean
	@ConditionalOnMissingBean
	ServerIdempotencyScopeResolver serverIdempotencyScopeResolver() {
		return new ServerPrincipalScopeResolver();
	}

	/** The door both entrances share: the web filter and the routes' filter function. */
	@Bean
	WebFluxDoor idempotencyWebFluxDoor(IdempotencyEngine engine, IdempotencyProperties properties,
			ServerIdempotencyScopeResolver scopeResolver, ObjectProvider<ServerIdempotencyErrorRenderer> renderer,
			ObjectProvider<ServerCodecConfigurer> codecs, ObjectProvider<ReactiveHandlerTransactions> transactions) {
		WebDoorSettings settings = WebDoorSettings.of(properties);
		ServerRefusals refusals = new ServerRefusals(
				() -> writers(codecs.getIfAvailable(ServerCodecConfigurer::create)), renderer.getIfAvailable(),
				settings.problemTypeBase());
		WebFluxDoor door = new WebFluxDoor(engine, scopeResolver, refusals, settings, Schedulers.boundedElastic());
		ReactiveHandlerTransactions atomic = transactions.getIfAvailable();
		door.setHandlerTransactions(atomic);
		if (atomic == null && JDBC_STORE_PRESENT
				&& SealingStore.unwrap(engine.store()) instanceof JdbcIdempotencyStore jdbc
				&& jdbc.transactionalCompletion()) {
			// Its default promise (the record in the handler's transaction) does not hold
			// here: say so once, at start-up, rather than let a user count on it.
			logger
				.warn("The JDBC idempotency store's atomic completion (idempotency.store.jdbc.transactional-completion)"
						+ " does not apply on WebFlux: a protected handler's writes commit on their own and its answer is"
						+ " recorded after them (a JDBC transaction would block an event loop). For the record in the"
						+ " handler's transaction on WebFlux, use the R2DBC store (idempotency.store.type=r2dbc); set"
						+ " idempotency.store.jdbc.transactional-completion=false to silence this");
		}
		return door;
	}

	/**
	 * Atomic completion: protected handlers run inside a reactive transaction on the
	 * R2DBC store's {@code ConnectionFactory}, whose commit holds their record. Only with
	 * the R2DBC store, unless {@code idempotency.store.r2dbc.transactional-completion} is
	 * off.
	 */
	@Configuration(proxyBeanMethods = false)
	@ConditionalOnBooleanProperty(name = "idempotency.store.r2dbc.transactional-completion", matchIfMissing = true)
	@ConditionalOnClass(
			name = { "org.springframework.r2dbc.connection.R2dbcTransactionManager", "io.r2dbc.spi.ConnectionFactory" })
	static class AtomicCompletionConfiguration {

		@Bean
		@ConditionalOnMissingBean
		@Nullable ReactiveHandlerTransactions idempotencyReactiveHandlerTransactions(IdempotencyEngine engine) {
			if (SealingStore.unwrap(engine.store()) instanceof R2dbcIdempotencyStore store) {
				return new ReactiveHandlerTransactions(store);
			}
			return null;
		}

	}

	/**
	 * Answers a refusal of the method door that left a handler with its own status and
	 * problem body (not Boot's {@code 500}).
	 */
	@Bean
	WebExceptionHandler idempotencyRejectedWebExceptionHandler(WebFluxDoor door) {
		return new IdempotencyRejectedWebExceptionHandler(door.refusals());
	}

	@Bean
	WebFilter idempotencyWebFilter(WebFluxDoor door, ObjectProvider<RequestMappingHandlerMapping> mappings) {
		return new IdempotencyWebFilter(door, () -> mappings.orderedStream().map(HandlerMapping.class::cast).toList());
	}

	/**
	 * The filter a functional route adds to be protected. Its answers are written through
	 * the application's {@link ServerResponseResultHandler} (its codecs and view
	 * resolvers), else through one over the application's codecs.
	 */
	@Bean
	@ConditionalOnMissingBean
	IdempotencyHandlerFilterFunction idempotencyHandlerFilterFunction(WebFluxDoor door,
			ObjectProvider<ServerResponseResultHandler> responses, ObjectProvider<ServerCodecConfigurer> codecs) {
		return new IdempotencyHandlerFilterFunction(door, () -> responses.getIfAvailable(() -> {
			ServerResponseResultHandler handler = new ServerResponseResultHandler();
			handler.setMessageWriters(writers(codecs.getIfAvailable(ServerCodecConfigurer::create)));
			handler.setViewResolvers(List.of());
			return handler;
		}));
	}

	private static List<HttpMessageWriter<?>> writers(ServerCodecConfigurer codecs) {
		return codecs.getWriters();
	}

}
