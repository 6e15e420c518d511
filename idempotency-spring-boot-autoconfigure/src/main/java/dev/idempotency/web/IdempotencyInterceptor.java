package dev.idempotency.web;

import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

import dev.idempotency.Idempotent;
import dev.idempotency.engine.Decision;
import dev.idempotency.engine.Fingerprints;
import dev.idempotency.engine.IdempotencyEngine;
import dev.idempotency.engine.IdempotencyError;
import dev.idempotency.engine.IdempotentCall;
import dev.idempotency.store.StoredResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.http.server.PathContainer;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerInterceptor;
import org.springframework.web.util.ServletRequestPathUtils;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;

/**
 * The HTTP front door: for a handler method annotated {@link Idempotent} (on the method or its
 * class), or a mutation whose path matches a configured pattern, asks the engine whether to run,
 * replay or refuse, before the handler runs. The {@link IdempotencyFilter} finishes what this
 * starts.
 */
public class IdempotencyInterceptor implements HandlerInterceptor {

	/** Holds the handler {@link Method} this door protects, so the method aspect does not protect it twice. */
	public static final String HANDLED_METHOD_ATTRIBUTE = IdempotencyInterceptor.class.getName() + ".method";

	/** Sent on every replayed response. */
	public static final String REPLAYED_HEADER = "Idempotent-Replayed";

	private final IdempotencyEngine engine;

	private final IdempotencyScopeResolver scopeResolver;

	private final IdempotencyErrorRenderer errorRenderer;

	private final String headerName;

	private final List<PathPattern> pathPatterns;

	private final boolean pathPatternsKeyRequired;

	private final Map<HandlerKey, Optional<Idempotent>> annotations = new ConcurrentHashMap<>();

	public IdempotencyInterceptor(IdempotencyEngine engine, IdempotencyScopeResolver scopeResolver,
			IdempotencyErrorRenderer errorRenderer, String headerName, List<String> pathPatterns,
			boolean pathPatternsKeyRequired) {
		this.engine = engine;
		this.scopeResolver = scopeResolver;
		this.errorRenderer = errorRenderer;
		this.headerName = headerName;
		this.pathPatterns = pathPatterns.stream().map(PathPatternParser.defaultInstance::parse).toList();
		this.pathPatternsKeyRequired = pathPatternsKeyRequired;
	}

	@Override
	public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler)
			throws IOException {
		if (request.getDispatcherType() != jakarta.servlet.DispatcherType.REQUEST) {
			// Async and error dispatches belong to a request that was already decided.
			return true;
		}
		HandlerMethod handlerMethod = (handler instanceof HandlerMethod method) ? method : null;
		Idempotent annotation = (handlerMethod != null) ? findAnnotation(handlerMethod) : null;
		if (annotation != null && !annotation.key().isEmpty()) {
			// A key expression: the method door protects this handler with it, whatever the header says.
			return true;
		}
		if (annotation != null) {
			// Tells the method aspect that this door owns the handler method, whatever the HTTP method.
			request.setAttribute(HANDLED_METHOD_ATTRIBUTE, handlerMethod.getMethod());
		}
		if (!IdempotencyFilter.isMutation(request.getMethod())
				|| (annotation == null && !matchesPathPattern(request))) {
			return true;
		}
		String operation;
		if (annotation != null && !annotation.operation().isEmpty()) {
			operation = annotation.operation();
		}
		else if (handlerMethod != null) {
			operation = handlerMethod.getBeanType().getSimpleName() + "." + handlerMethod.getMethod().getName();
		}
		else {
			operation = request.getMethod() + " " + request.getRequestURI();
		}
		boolean keyRequired = (annotation != null) ? annotation.keyRequired() : this.pathPatternsKeyRequired;
		List<String> keys = Collections.list(request.getHeaders(this.headerName));
		CapturingResponse capturing = IdempotencyFilter.capturingResponse(response);
		if (!keys.isEmpty() && capturing == null) {
			throw new IllegalStateException("IdempotencyFilter is not installed in front of " + request.getRequestURI()
					+ ": register it (the auto-configuration does) to protect " + operation);
		}
		Decision decision = this.engine.begin(new IdempotentCall(this.scopeResolver.resolveScope(request), keys,
				IdempotentCall.KeyFormat.UUID_V7, keyRequired, operation, () -> fingerprint(request)));
		if (decision instanceof Decision.Proceed proceed) {
			if (proceed.reservation() != null) {
				request.setAttribute(IdempotencyFilter.RESERVATION_ATTRIBUTE, proceed.reservation());
				capturing.startCapture(this.engine.settings().maxBodyBytes());
			}
			return true;
		}
		if (decision instanceof Decision.Replay replay) {
			replay(replay.response(), response);
			return false;
		}
		IdempotencyError error = ((Decision.Reject) decision).error();
		if (error.retryAfter() != null) {
			response.setHeader("Retry-After", Long.toString(Math.max(1, error.retryAfter().toSeconds())));
		}
		this.errorRenderer.render(error, request, response);
		return false;
	}

	/** The method's or else its class's annotation, looked up once per handler method. */
	private @Nullable Idempotent findAnnotation(HandlerMethod handlerMethod) {
		return this.annotations.computeIfAbsent(new HandlerKey(handlerMethod.getBeanType(), handlerMethod.getMethod()),
				(key) -> {
					Idempotent onMethod = AnnotatedElementUtils.findMergedAnnotation(key.method(), Idempotent.class);
					return Optional.ofNullable((onMethod != null) ? onMethod
							: AnnotatedElementUtils.findMergedAnnotation(key.beanType(), Idempotent.class));
				})
			.orElse(null);
	}

	private record HandlerKey(Class<?> beanType, Method method) {
	}

	private boolean matchesPathPattern(HttpServletRequest request) {
		if (this.pathPatterns.isEmpty()) {
			return false;
		}
		PathContainer path = ServletRequestPathUtils.hasParsedRequestPath(request)
				? ServletRequestPathUtils.getParsedRequestPath(request).pathWithinApplication()
				: PathContainer.parsePath(request.getRequestURI().substring(request.getContextPath().length()));
		return this.pathPatterns.stream().anyMatch((pattern) -> pattern.matches(path));
	}

	private static String fingerprint(HttpServletRequest request) {
		byte[] body = IdempotencyFilter.cachedBody(request);
		if (body == null) {
			// A form post: its body is the parameter map, which the container parses.
			Map<String, String[]> sorted = new TreeMap<>(request.getParameterMap());
			StringBuilder form = new StringBuilder();
			sorted.forEach((name, values) -> form.append(name).append('=').append(String.join(",", values)).append('&'));
			body = form.toString().getBytes(StandardCharsets.UTF_8);
		}
		return Fingerprints.http(request.getMethod(), request.getRequestURI(), request.getQueryString(), body);
	}

	private static void replay(StoredResponse stored, HttpServletResponse response) throws IOException {
		response.setStatus(stored.status());
		stored.headers().forEach((name, values) -> {
			if ("Content-Type".equalsIgnoreCase(name)) {
				response.setContentType(values.get(0));
			}
			else {
				values.forEach((value) -> response.addHeader(name, value));
			}
		});
		response.setHeader(REPLAYED_HEADER, "true");
		response.setContentLength(stored.body().length);
		if (stored.body().length > 0) {
			response.getOutputStream().write(stored.body());
		}
		response.flushBuffer();
	}

}
