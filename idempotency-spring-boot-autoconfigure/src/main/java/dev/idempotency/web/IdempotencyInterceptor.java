package dev.idempotency.web;

import java.io.IOException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
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
import jakarta.servlet.RequestDispatcher;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;
import org.springframework.core.ResolvableType;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.http.HttpEntity;
import org.springframework.http.server.PathContainer;
import org.springframework.util.ClassUtils;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.servlet.AsyncHandlerInterceptor;
import org.springframework.web.servlet.DispatcherServlet;
import org.springframework.web.servlet.HandlerMapping;
import org.springframework.web.servlet.ModelAndView;
import org.springframework.web.util.ServletRequestPathUtils;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;

/**
 * The HTTP front door: for a handler method annotated {@link Idempotent} (on the method
 * or its class), or a mutation whose path matches a configured pattern, asks the engine
 * whether to run, replay or refuse, before the handler runs. A refusal is thrown as an
 * {@link IdempotencyRejectedException}, for Spring MVC's exception handling. While a
 * protected handler runs, the call's observation is the current one on the request
 * thread. The {@link IdempotencyFilter} finishes what this starts.
 */
class IdempotencyInterceptor implements AsyncHandlerInterceptor {

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

	private final Map<HandlerKey, ProtectedHandler> handlers = new ConcurrentHashMap<>();

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
		ProtectedHandler protectedHandler = (handlerMethod != null) ? protectedHandler(handlerMethod) : null;
		if (protectedHandler != null && protectedHandler.keyExpression()) {
			// A key expression: the method door protects this handler with it, whatever
			// the header says.
			return true;
		}
		if (!HttpMethods.isMutation(request.getMethod())) {
			return true;
		}
		String operation;
		boolean keyRequired;
		KeyFormat keyFormat;
		if (protectedHandler != null && protectedHandler.annotated()) {
			operation = protectedHandler.operation();
			keyRequired = protectedHandler.keyRequired();
			keyFormat = protectedHandler.keyFormat();
		}
		else {
			PathPattern pattern = matchingPathPattern(request);
			if (pattern == null) {
				return true;
			}
			// A handler method's name, else a pattern, never the URI: the operation is a
			// metric tag, and one value per URI would grow without bound.
			operation = (protectedHandler != null) ? protectedHandler.operation()
					: request.getMethod() + " " + matchedPattern(request, pattern);
			keyRequired = this.pathPatternsKeyRequired;
			keyFormat = this.keyFormat;
		}
		// Decided once per handler method, before the key is reserved: whether the answer
		// comes later (on another thread), which both the store's begin and the capture
		// of the answer depend on.
		boolean later = protectedHandler != null && protectedHandler.answersLater();
		List<String> keys = headerValues(request.getHeaders(this.headerName));
		IdempotentExchange exchange = IdempotentExchange.of(request);
		if (!keys.isEmpty() && exchange == null) {
			throw new IllegalStateException("IdempotencyFilter is not installed in front of " + request.getRequestURI()
					+ ": register it (the auto-configuration does) to protect " + operation);
		}
		Decision decision;
		try {
			// The body is read only here, by the fingerprint, once the key is valid.
			HttpRequestFingerprint fingerprint = ServletRequestBodies.fingerprint(request, this.maxRequestBytes,
					this.jsonFingerprint);
			decision = this.engine.begin(
					new IdempotentCall(this.scopeResolver.resolveScope(request), keys, keyFormat, keyRequired,
							operation, fingerprint::fingerprint, fingerprint::earlierFingerprints),
					completesAtomically(handlerMethod, later));
		}
		catch (RequestTooLargeException ex) {
			decision = new Decision.Reject(
					IdempotencyError.of(IdempotencyErrorType.REQUEST_TOO_LARGE, ex.getMessage()));
		}
		if (decision instanceof Decision.Proceed proceed) {
			if (proceed.reservation() != null) {
				// A reservation means a key was sent, so the filter's exchange is there
				// (checked above).
				IdempotentExchange reserved = Objects.requireNonNull(exchange, "IdempotentExchange");
				beginTransaction(reserved, proceed.reservation(), handlerMethod, later);
				reserved.reserved(proceed.reservation());
				reserved.response().startCapture(this.engine.settings().maxBodyBytes(), !later);
				reserved.running(proceed.reservation(), this.engine.openScope(proceed.reservation()));
			}
			return true;
		}
		if (decision instanceof Decision.Replay replay) {
			ReplayWriter.write(replay.response(), response);
			return false;
		}
		throw new IdempotencyRejectedException(((Decision.Reject) decision).error(), this.problemTypeBase);
	}

	/** The values of a header: most often one, in a list that costs one object. */
	private static List<String> headerValues(@Nullable Enumeration<String> values) {
		if (values == null || !values.hasMoreElements()) {
			return List.of();
		}
		String first = values.nextElement();
		if (!values.hasMoreElements()) {
			return List.of(first);
		}
		List<String> all = new ArrayList<>();
		all.add(first);
		while (values.hasMoreElements()) {
			all.add(values.nextElement());
		}
		return all;
	}

	/**
	 * Whether a run of this handler will complete atomically (its answer recorded in the
	 * door's transaction, which the store joins), as far as the door knows before the key
	 * is reserved: not before the first protected request checked that the store joins,
	 * and never for a handler that answers later.
	 */
	private boolean completesAtomically(@Nullable HandlerMethod handlerMethod, boolean answersLater) {
		HandlerTransactions transactions = this.transactions;
		return transactions != null && transactions.storeJoins() && handlerMethod != null && !answersLater;
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

	@Override
	public void afterConcurrentHandlingStarted(HttpServletRequest request, HttpServletResponse response,
			Object handler) {
		// The request thread leaves; the dispatch that answers comes later.
		IdempotentExchange exchange = IdempotentExchange.of(request);
		if (exchange != null) {
			exchange.closeScope();
		}
	}

	/**
	 * Once the handler and the rendering are done (on an asynchronous handler's last
	 * dispatch too): closes the scope of the run's observation, which the filter stops
	 * when it finishes the run, and gives it the handler's exception, whether it left
	 * Spring MVC or its exception handling answered it.
	 */
	@Override
	public void afterCompletion(HttpServletRequest request, HttpServletResponse response, Object handler,
			@Nullable Exception ex) {
		IdempotentExchange exchange = IdempotentExchange.of(request);
		Reservation run = (exchange != null) ? exchange.takeRun() : null;
		if (exchange == null || run == null) {
			return;
		}
		exchange.closeScope();
		Object handled = (ex != null) ? ex : request.getAttribute(DispatcherServlet.EXCEPTION_ATTRIBUTE);
		if (handled == null) {
			handled = request.getAttribute(RequestDispatcher.ERROR_EXCEPTION);
		}
		if (handled instanceof Throwable error) {
			this.engine.threw(run, error);
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

	/**
	 * What the door needs of a handler method, worked out on its first request and kept:
	 * the method's or else its class's annotation, the operation, and whether it answers
	 * later.
	 */
	private ProtectedHandler protectedHandler(HandlerMethod handlerMethod) {
		HandlerKey key = new HandlerKey(handlerMethod.getBeanType(), handlerMethod.getMethod());
		ProtectedHandler known = this.handlers.get(key);
		// Only the first request of a handler method makes the (capturing) function.
		return (known != null) ? known : this.handlers.computeIfAbsent(key, this::describe);
	}

	private ProtectedHandler describe(HandlerKey handler) {
		Idempotent onMethod = AnnotatedElementUtils.findMergedAnnotation(handler.method(), Idempotent.class);
		Idempotent annotation = (onMethod != null) ? onMethod
				: AnnotatedElementUtils.findMergedAnnotation(handler.beanType(), Idempotent.class);
		String operation = (annotation != null && !annotation.operation().isEmpty()) ? annotation.operation()
				: handler.beanType().getSimpleName() + "." + handler.method().getName();
		if (annotation == null) {
			return new ProtectedHandler(false, false, operation, false, KeyFormat.DEFAULT,
					answersLater(handler.method()));
		}
		return new ProtectedHandler(true, !annotation.key().isEmpty(), operation, annotation.keyRequired(),
				annotation.keyFormat().orElse(this.keyFormat), answersLater(handler.method()));
	}

	/**
	 * What the door needs of a handler method, read from its {@link Idempotent} once.
	 *
	 * @param annotated whether the method or its class is annotated
	 * @param keyExpression whether the annotation has a key expression (the method
	 * door's)
	 * @param operation the operation's name
	 * @param keyRequired whether a request without a key is refused (annotated only)
	 * @param keyFormat the format of the header's keys (annotated only)
	 * @param answersLater whether it answers on another thread ({@link #answersLater})
	 */
	private record ProtectedHandler(boolean annotated, boolean keyExpression, String operation, boolean keyRequired,
			KeyFormat keyFormat, boolean answersLater) {

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
	 * else the configured one that matched.
	 */
	private static String matchedPattern(HttpServletRequest request, PathPattern configured) {
		Object best = request.getAttribute(HandlerMapping.BEST_MATCHING_PATTERN_ATTRIBUTE);
		return (best instanceof String pattern && !pattern.isEmpty()) ? pattern : configured.getPatternString();
	}

	private static PathContainer pathWithinApplication(HttpServletRequest request) {
		return ServletRequestPathUtils.hasParsedRequestPath(request)
				? ServletRequestPathUtils.getParsedRequestPath(request).pathWithinApplication()
				: PathContainer.parsePath(request.getRequestURI().substring(request.getContextPath().length()));
	}

	/**
	 * The first of {@code idempotency.web.path-patterns} that matches the request;
	 * {@code null}: none does.
	 */
	private @Nullable PathPattern matchingPathPattern(HttpServletRequest request) {
		if (this.pathPatterns.isEmpty()) {
			return null;
		}
		PathContainer path = pathWithinApplication(request);
		for (PathPattern pattern : this.pathPatterns) {
			if (pattern.matches(path)) {
				return pattern;
			}
		}
		return null;
	}

}
