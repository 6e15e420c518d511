package dev.idempotency.web;

import java.lang.reflect.Method;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import dev.idempotency.Idempotent;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.http.server.PathContainer;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.reactive.HandlerMapping;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;

/**
 * The HTTP front door for WebFlux, the same door as {@link IdempotencyInterceptor} and
 * {@link IdempotencyFilter} on Spring MVC, with the same properties and answers: for a
 * handler method annotated {@link Idempotent} without a key expression (on the method or
 * its class), or a mutation whose path matches {@code idempotency.web.path-patterns}
 * (functional routes included), finds what protects the request and hands it to the
 * {@link WebFluxDoor}, which does the rest; a functional route's own
 * {@link IdempotencyHandlerFilterFunction} enters the same door.
 */
final class IdempotencyWebFilter implements WebFilter, Ordered, SmartInitializingSingleton {

	private final WebFluxDoor door;

	private final Supplier<List<HandlerMapping>> handlerMappings;

	/**
	 * The annotated controllers' mappings, looked up once every singleton exists: never
	 * on an event loop, and without a lock there.
	 */
	private volatile @Nullable List<HandlerMapping> mappings;

	private final WebDoorSettings settings;

	private final List<PathPattern> pathPatterns;

	/**
	 * Per handler method and bean type (a class's annotation applies to its own
	 * handlers).
	 */
	private final Map<List<Object>, Optional<ProtectedHandler>> handlers = new ConcurrentHashMap<>();

	IdempotencyWebFilter(WebFluxDoor door, Supplier<List<HandlerMapping>> handlerMappings) {
		this.door = door;
		this.handlerMappings = handlerMappings;
		this.settings = door.settings();
		this.pathPatterns = this.settings.pathPatterns()
			.stream()
			.map(PathPatternParser.defaultInstance::parse)
			.toList();
	}

	@Override
	public void afterSingletonsInstantiated() {
		mappings();
	}

	private List<HandlerMapping> mappings() {
		List<HandlerMapping> mappings = this.mappings;
		if (mappings == null) {
			mappings = List.copyOf(this.handlerMappings.get());
			this.mappings = mappings;
		}
		return mappings;
	}

	/**
	 * After security filters (so the principal is known), as the servlet door's filter.
	 */
	@Override
	public int getOrder() {
		return IdempotencyWebMvcAutoConfiguration.FILTER_ORDER;
	}

	@Override
	public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
		if (!HttpMethods.isMutation(exchange.getRequest().getMethod().name())) {
			return chain.filter(exchange);
		}
		return protection(exchange).map(Optional::of)
			.defaultIfEmpty(Optional.empty())
			.flatMap((handler) -> handler.isPresent() ? this.door.protect(exchange, handler.get(), chain)
					: chain.filter(exchange));
	}

	/**
	 * What protects the request: its annotated handler method, else a matching path
	 * pattern; empty when nothing does (or the method door does, for a key expression).
	 */
	private Mono<WebFluxDoor.Protection> protection(ServerWebExchange exchange) {
		return handlerMethod(exchange).map(Optional::of).defaultIfEmpty(Optional.empty()).flatMap((method) -> {
			ProtectedHandler annotated = method.flatMap(this::annotated).orElse(null);
			if (annotated != null) {
				return annotated.keyExpression() ? Mono.empty() : Mono.just(annotated.protection());
			}
			PathPattern pattern = matchingPathPattern(exchange);
			if (pattern == null) {
				return Mono.empty();
			}
			String operation = method.map((handler) -> operationName(handler, null))
				.orElseGet(() -> exchange.getRequest().getMethod().name() + " " + matchedPattern(exchange, pattern));
			return Mono.just(new WebFluxDoor.Protection(operation, this.settings.pathPatternsKeyRequired(),
					this.settings.keyFormat()));
		});
	}

	/**
	 * The handler method the annotated controllers' mappings choose for the exchange
	 * (found again by the dispatcher); none for a functional route, or when no mapping
	 * matches (the dispatcher then answers as it would).
	 */
	private Mono<HandlerMethod> handlerMethod(ServerWebExchange exchange) {
		return Flux.fromIterable(mappings())
			.concatMap((mapping) -> mapping.getHandler(exchange).onErrorResume((ex) -> Mono.empty()))
			.next()
			.filter(HandlerMethod.class::isInstance)
			.cast(HandlerMethod.class);
	}

	private Optional<ProtectedHandler> annotated(HandlerMethod handler) {
		return this.handlers.computeIfAbsent(List.of(handler.getBeanType(), handler.getMethod()), (key) -> {
			Method method = handler.getMethod();
			Idempotent onMethod = AnnotatedElementUtils.findMergedAnnotation(method, Idempotent.class);
			Idempotent annotation = (onMethod != null) ? onMethod
					: AnnotatedElementUtils.findMergedAnnotation(handler.getBeanType(), Idempotent.class);
			if (annotation == null) {
				return Optional.empty();
			}
			return Optional.of(new ProtectedHandler(!annotation.key().isEmpty(),
					new WebFluxDoor.Protection(operationName(handler, annotation), annotation.keyRequired(),
							annotation.keyFormat().orElse(this.settings.keyFormat()))));
		});
	}

	private static String operationName(HandlerMethod handler, @Nullable Idempotent annotation) {
		return (annotation != null && !annotation.operation().isEmpty()) ? annotation.operation()
				: handler.getBeanType().getSimpleName() + "." + handler.getMethod().getName();
	}

	private static String matchedPattern(ServerWebExchange exchange, PathPattern configured) {
		Object best = exchange.getAttribute(HandlerMapping.BEST_MATCHING_PATTERN_ATTRIBUTE);
		return (best instanceof PathPattern pattern) ? pattern.getPatternString() : configured.getPatternString();
	}

	private @Nullable PathPattern matchingPathPattern(ServerWebExchange exchange) {
		if (this.pathPatterns.isEmpty()) {
			return null;
		}
		PathContainer path = exchange.getRequest().getPath().pathWithinApplication();
		for (PathPattern pattern : this.pathPatterns) {
			if (pattern.matches(path)) {
				return pattern;
			}
		}
		return null;
	}

	/**
	 * What the door needs of a protected handler.
	 *
	 * @param keyExpression whether the annotation has a key expression (the method
	 * door's)
	 * @param protection what protects it when it has none
	 */
	private record ProtectedHandler(boolean keyExpression, WebFluxDoor.Protection protection) {
	}

}
