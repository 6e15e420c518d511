package dev.idempotency.web;

import java.io.IOException;
import java.lang.reflect.Method;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import dev.idempotency.IdempotencyRejectedException;
import dev.idempotency.Idempotent;
import dev.idempotency.core.IdempotencyError;
import dev.idempotency.core.IdempotencyErrorType;
import dev.idempotency.core.KeyFormat;
import dev.idempotency.core.internal.Decision;
import dev.idempotency.core.internal.IdempotencyEngine;
import dev.idempotency.core.internal.IdempotentCall;
import dev.idempotency.core.internal.Reservation;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;
import org.springframework.core.ResolvableType;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.http.HttpEntity;
import org.springframework.http.server.PathContainer;
import org.springframework.util.ClassUtils;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.HandlerInterceptor;
import org.springframework.web.servlet.HandlerMapping;
import org.springframework.web.servlet.ModelAndView;
import org.springframework.web.util.ServletRequestPathUtils;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;

/**
 * The HTTP front door: for a handler method annotated {@link Idempotent} (on the method
 * or its class), or a mutation whose path matches a configured pattern, asks the engine
 * whether to run, replay or refuse, before the handler runs. A refusal is thrown as an
 * {@link IdempotencyRejectedException}, for Spring MVC's exception handling. The
 * {@link IdempotencyFilter} finishes what this starts.
 */
class IdempotencyInterceptor implements HandlerInterceptor {

	/** Sent on every replayed response. */
	static final String REPLAYED_HEADER = "Idempotent-Replayed";

	/** The default of {@code idempotency.request.max-body-size}. */
	static final long DEFAULT_MAX_REQUEST_BYTES = 1024 * 1024;

	private final IdempotencyEngine engine;

	private final IdempotencyScopeResolver scopeResolver;

	private final String problemTypeBase;

	private final String headerName;

	private final List<PathPattern> pathPatterns;

	private final boolean pathPatternsKeyRequired;

	private final long maxRequestBytes;

	private final KeyFormat keyFormat;

	private final JsonFingerprint jsonFingerprint;

	private final Map<HandlerKey, Optional<Idempotent>> annotations = new ConcurrentHashMap<>();

	private final Map<Method, Boolean> answeredLater = new ConcurrentHashMap<>();

	private @Nullable HandlerTransactions transactions;

	/**
	 * @param problemTypeBase the base of the problem {@code type} URIs of the errors it
	 * throws
	 * @param maxRequestBytes the largest request body read to fingerprint a keyed
	 * request; a larger one is answered 413 without being read further
	 */
	IdempotencyInterceptor(IdempotencyEngine engine, IdempotencyScopeResolver scopeResolver, String problemTypeBase,
			String headerName, List<String> pathPatterns, boolean pathPatternsKeyRequired, long maxRequestBytes) {
		this(engine, scopeResolver, problemTypeBase, headerName, pathPatterns, pathPatternsKeyRequired, maxRequestBytes,
				KeyFormat.UUID_V7, JsonFingerprint.BYTES);
	}

	/**
	 * @param problemTypeBase the base of the problem {@code type} URIs of the errors it
	 * throws
	 * @param maxRequestBytes the largest request body read to fingerprint a keyed
	 * request; a larger one is answered 413 without being read further
	 * @param keyFormat the format of the header's keys where
	 * {@link Idempotent#keyFormat()} does not say
	 * @param jsonFingerprint how a JSON body is fingerprinted
	 */
	IdempotencyInterceptor(IdempotencyEngine engine, IdempotencyScopeResolver scopeResolver, String problemTypeBase,
			String headerName, List<String> pathPatterns, boolean pathPatternsKeyRequired, long maxRequestBytes,
			KeyFormat keyFormat, JsonFingerprint jsonFingerprint) {
		this.engine = engine;
		this.keyFormat = keyFormat.orElse(KeyFormat.UUID_V7);
		this.jsonFingerprint = jsonFingerprint;
		this.scopeResolver = scopeResolver;
		this.problemTypeBase = problemTypeBase;
		this.headerName = headerName;
		this.pathPatterns = pathPatterns.stream().map(PathPatternParser.defaultInstance::parse).toList();
		this.pathPatternsKeyRequired = pathPatternsKeyRequired;
		this.maxRequestBytes = maxRequestBytes;
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
			// A key expression: the method door protects this handler with it, whatever
			// the header says.
			return true;
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
			// A pattern, never the URI: the operation is a metric tag, and one value per
			// URI would grow without bound.
			operation = request.getMethod() + " " + matchedPattern(request);
		}
		boolean keyRequired = (annotation != null) ? annotation.keyRequired() : this.pathPatternsKeyRequired;
		List<String> keys = Collections.list(request.getHeaders(this.headerName));
		IdempotentExchange exchange = IdempotentExchange.of(request);
		if (!keys.isEmpty() && exchange == null) {
			throw new IllegalStateException("IdempotencyFilter is not installed in front of " + request.getRequestURI()
					+ ": register it (the auto-configuration does) to protect " + operation);
		}
		Decision decision;
		try {
			// The body is read only here, by the fingerprint, once the key is valid.
			HttpRequestFingerprint fingerprint = new HttpRequestFingerprint(request, this.maxRequestBytes,
					this.jsonFingerprint);
			decision = this.engine.begin(
					new IdempotentCall(this.scopeResolver.resolveScope(request), keys,
							(annotation != null) ? annotation.keyFormat().orElse(this.keyFormat) : this.keyFormat,
							keyRequired, operation, fingerprint::fingerprint, fingerprint::earlierFingerprints),
					completesAtomically(handlerMethod));
		}
		catch (RequestTooLargeException ex) {
			decision = new Decision.Reject(
					IdempotencyError.of(IdempotencyErrorType.REQUEST_TOO_LARGE, ex.getMessage()));
		}
		if (decision instanceof Decision.Proceed proceed) {
			if (proceed.reservation() != null) {
				boolean later = (handlerMethod != null) && this.answeredLater.computeIfAbsent(handlerMethod.getMethod(),
						IdempotencyInterceptor::answersLater);
				// A reservation means a key was sent, so the filter's exchange is there
				// (checked above).
				IdempotentExchange reserved = Objects.requireNonNull(exchange, "IdempotentExchange");
				beginTransaction(reserved, proceed.reservation(), handlerMethod, later);
				reserved.reserved(proceed.reservation());
				reserved.response().startCapture(this.engine.settings().maxBodyBytes(), !later);
			}
			return true;
		}
		if (decision instanceof Decision.Replay replay) {
			ReplayWriter.write(replay.response(), response);
			return false;
		}
		throw new IdempotencyRejectedException(((Decision.Reject) decision).error(), this.problemTypeBase);
	}

	/**
	 * Whether a run of this handler will complete atomically (its answer recorded in the
	 * door's transaction, which the store joins), as far as the door knows before the key
	 * is reserved: not before the first protected request checked that the store joins,
	 * and never for a handler that answers later.
	 */
	private boolean completesAtomically(@Nullable HandlerMethod handlerMethod) {
		HandlerTransactions transactions = this.transactions;
		return transactions != null && transactions.storeJoins() && handlerMethod != null
				&& !this.answeredLater.computeIfAbsent(handlerMethod.getMethod(), IdempotencyInterceptor::answersLater);
	}

	/**
	 * Atomic completion: the transaction that the handler's writes and the record share
	 * begins now, after the key was reserved (or found free), before the handler runs. If
	 * it cannot begin, the key is freed again and the request refused with 503.
	 */
	private void beginTransaction(IdempotentExchange exchange, Reservation reservation,
			@Nullable HandlerMethod handlerMethod, boolean later) {
		HandlerTransactions transactions = this.transactions;
		if (transactions == null) {
			return;
		}
		if (later) {
			// Only a handler method answers later.
			transactions.asynchronous(Objects.requireNonNull(handlerMethod, "handlerMethod").getMethod());
			return;
		}
		try {
			transactions.begin(exchange);
		}
		catch (RuntimeException ex) {
			this.engine.failed(reservation, "its transaction could not begin: " + ex);
			throw new IdempotencyRejectedException(new IdempotencyError(IdempotencyErrorType.STORE_UNAVAILABLE, 503,
					"the request's transaction could not begin; nothing was done, retry later",
					this.engine.settings().storeFailure().retryAfter()), this.problemTypeBase);
		}
	}

	@Override
	public void postHandle(HttpServletRequest request, HttpServletResponse response, Object handler,
			@Nullable ModelAndView modelAndView) {
		IdempotentExchange exchange = IdempotentExchange.of(request);
		if (exchange != null) {
			exchange.handlerReturned();
		}
	}

	/**
	 * Runs protected synchronous handlers inside a transaction whose commit holds their
	 * record (atomic completion); {@code null}: no transaction of the door's own.
	 */
	void setHandlerTransactions(@Nullable HandlerTransactions transactions) {
		this.transactions = transactions;
	}

	/**
	 * Return types Spring MVC answers on another thread, after the request thread
	 * returned.
	 */
	private static final List<String> ANSWERED_LATER = List.of("java.util.concurrent.Callable",
			"java.util.concurrent.Future", "java.util.concurrent.CompletionStage",
			"org.springframework.web.context.request.async.DeferredResult",
			"org.springframework.web.context.request.async.WebAsyncTask",
			"org.springframework.web.servlet.mvc.method.annotation.ResponseBodyEmitter",
			"org.springframework.web.servlet.mvc.method.annotation.StreamingResponseBody",
			"org.reactivestreams.Publisher");

	/**
	 * Whether the handler method answers asynchronously (its answer then streams to the
	 * client as it is written, and is stored afterwards); a synchronous answer is held
	 * until it is stored. Looked up once per handler method.
	 */
	static boolean answersLater(Method handlerMethod) {
		ResolvableType type = ResolvableType.forMethodReturnType(handlerMethod);
		if (HttpEntity.class.isAssignableFrom(type.toClass())) {
			type = type.as(HttpEntity.class).getGeneric(0);
		}
		Class<?> returned = type.toClass();
		for (Class<?> candidate = returned; candidate != null; candidate = candidate.getSuperclass()) {
			if (isAnsweredLater(candidate)) {
				return true;
			}
		}
		return ClassUtils.getAllInterfacesForClassAsSet(returned)
			.stream()
			.anyMatch(IdempotencyInterceptor::isAnsweredLater);
	}

	private static boolean isAnsweredLater(Class<?> type) {
		return ANSWERED_LATER.contains(type.getName());
	}

	/** The method's or else its class's annotation, looked up once per handler method. */
	private @Nullable Idempotent findAnnotation(HandlerMethod handlerMethod) {
		return this.annotations
			.computeIfAbsent(new HandlerKey(handlerMethod.getBeanType(), handlerMethod.getMethod()), (key) -> {
				Idempotent onMethod = AnnotatedElementUtils.findMergedAnnotation(key.method(), Idempotent.class);
				return Optional.ofNullable((onMethod != null) ? onMethod
						: AnnotatedElementUtils.findMergedAnnotation(key.beanType(), Idempotent.class));
			})
			.orElse(null);
	}

	/**
	 * A handler method: the bean type and the method, compared by identity first (a
	 * request's handler carries the instances the mapping registered, so the look-up
	 * almost never needs {@link Method#equals}, which compares names and parameter
	 * types).
	 */
	private record HandlerKey(Class<?> beanType, Method method) {

		@Override
		public boolean equals(@Nullable Object other) {
			return this == other || (other instanceof HandlerKey key && this.beanType == key.beanType
					&& (this.method == key.method || this.method.equals(key.method)));
		}

		@Override
		public int hashCode() {
			return 31 * this.beanType.hashCode() + this.method.hashCode();
		}

	}

	/**
	 * The pattern the handler mapping matched (a functional route, a URL-mapped handler),
	 * else the first of {@code idempotency.web.path-patterns} that matches.
	 */
	private String matchedPattern(HttpServletRequest request) {
		Object best = request.getAttribute(HandlerMapping.BEST_MATCHING_PATTERN_ATTRIBUTE);
		if (best instanceof String pattern && !pattern.isEmpty()) {
			return pattern;
		}
		PathContainer path = pathWithinApplication(request);
		return this.pathPatterns.stream()
			.filter((pattern) -> pattern.matches(path))
			.map(PathPattern::getPatternString)
			.findFirst()
			.orElse("(unmatched)");
	}

	private static PathContainer pathWithinApplication(HttpServletRequest request) {
		return ServletRequestPathUtils.hasParsedRequestPath(request)
				? ServletRequestPathUtils.getParsedRequestPath(request).pathWithinApplication()
				: PathContainer.parsePath(request.getRequestURI().substring(request.getContextPath().length()));
	}

	private boolean matchesPathPattern(HttpServletRequest request) {
		if (this.pathPatterns.isEmpty()) {
			return false;
		}
		PathContainer path = pathWithinApplication(request);
		return this.pathPatterns.stream().anyMatch((pattern) -> pattern.matches(path));
	}

}
