package dev.idempotency.aspect;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyRejectedException;
import dev.idempotency.engine.Answer;
import dev.idempotency.engine.Decision;
import dev.idempotency.engine.Fingerprints;
import dev.idempotency.engine.IdempotencyEngine;
import dev.idempotency.engine.IdempotencyErrorType;
import dev.idempotency.engine.IdempotencyListener;
import dev.idempotency.engine.IdempotencyOutcome;
import dev.idempotency.engine.IdempotentCall;
import dev.idempotency.engine.Reservation;
import dev.idempotency.store.StoredResponse;
import dev.idempotency.web.IdempotencyFilter;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.support.AopUtils;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.core.ResolvableType;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.expression.Expression;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.type.TypeFactory;

/**
 * The method front door: {@link Idempotent @Idempotent} on any Spring bean method. The
 * key comes from the annotation's SpEL expression over the arguments; the fingerprint
 * covers the method and its arguments serialized as JSON; the return value is stored as
 * JSON and replayed as the method's declared (generic) return type, or as the result's
 * own class when the declared type is {@code Object}, an interface or an abstract class.
 * A result is stored only once it has been read back as a value of the declared type;
 * otherwise the key is released and the call fails with an {@link IllegalStateException},
 * so a retry never finds an answer it cannot replay. Handler methods that the HTTP door
 * protects (those without a key expression) are left to it.
 * <p>
 * Applied by the {@link IdempotentMethodPostProcessor} to beans with {@code @Idempotent}
 * on a method or on the class (then to each of its methods).
 */
public class IdempotentMethodInterceptor implements MethodInterceptor {

	private static final Log logger = LogFactory.getLog(IdempotentMethodInterceptor.class);

	/**
	 * Kept with a stored result whose declared return type does not say which class to
	 * read it as.
	 */
	static final String RESULT_TYPE_HEADER = "Result-Type";

	private static final String REQUEST_HANDLED_METHOD = "dev.idempotency.web.IdempotencyInterceptor.method";

	private final IdempotencyEngine engine;

	private final ObjectMapper objectMapper;

	private final Supplier<String> scopeSupplier;

	private final String problemTypeBase;

	private final IdempotencyListener listener;

	private final List<String> allowedResultTypes;

	private final SpelExpressionParser parser = new SpelExpressionParser();

	private final ParameterNameDiscoverer parameterNames = new DefaultParameterNameDiscoverer();

	private final Map<String, Expression> keyExpressions = new ConcurrentHashMap<>();

	private final Map<MethodOnClass, Optional<Found>> annotations = new ConcurrentHashMap<>();

	/**
	 * @param engine the protocol
	 * @param objectMapper writes arguments (for the fingerprint) and results, reads
	 * results back
	 * @param scopeSupplier whom a key belongs to, for the current call
	 * @param problemTypeBase the base of the problem {@code type} URIs of an
	 * {@link IdempotencyRejectedException}
	 * @param listener told of calls whose key expression yields {@code null} (the
	 * engine's own listener, told of every other outcome)
	 */
	public IdempotentMethodInterceptor(IdempotencyEngine engine, ObjectMapper objectMapper,
			Supplier<String> scopeSupplier, String problemTypeBase, IdempotencyListener listener) {
		this(engine, objectMapper, scopeSupplier, problemTypeBase, listener, List.of());
	}

	/**
	 * @param engine the protocol
	 * @param objectMapper writes arguments (for the fingerprint) and results, reads
	 * results back
	 * @param scopeSupplier whom a key belongs to, for the current call
	 * @param problemTypeBase the base of the problem {@code type} URIs of an
	 * {@link IdempotencyRejectedException}
	 * @param listener told of calls whose key expression yields {@code null} (the
	 * engine's own listener, told of every other outcome)
	 * @param allowedResultTypes classes and packages (with their sub-packages) that a
	 * stored result may name as its class, besides the packages of the bean and of its
	 * declared return type, and JDK values
	 * @since 0.1.0
	 */
	public IdempotentMethodInterceptor(IdempotencyEngine engine, ObjectMapper objectMapper,
			Supplier<String> scopeSupplier, String problemTypeBase, IdempotencyListener listener,
			List<String> allowedResultTypes) {
		this.engine = engine;
		this.objectMapper = objectMapper;
		this.scopeSupplier = scopeSupplier;
		this.problemTypeBase = problemTypeBase;
		this.listener = listener;
		this.allowedResultTypes = List.copyOf(allowedResultTypes);
	}

	@Override
	public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
		Object target = invocation.getThis();
		Class<?> targetClass = (target != null) ? AopUtils.getTargetClass(target)
				: invocation.getMethod().getDeclaringClass();
		Method method = AopUtils.getMostSpecificMethod(invocation.getMethod(), targetClass);
		Found found = findAnnotation(method, targetClass);
		if (found == null || ReflectionUtils.isObjectMethod(method)) {
			return invocation.proceed();
		}
		Idempotent annotation = found.annotation();
		RequestAttributes web = RequestContextHolder.getRequestAttributes();
		if (annotation.key().isEmpty()) {
			// No key expression: a handler method, which the HTTP door protects with the
			// header.
			if (web == null && found.onMethod()) {
				throw new IllegalStateException("@Idempotent on " + method.toGenericString()
						+ " called outside a web request needs key = \"<SpEL over the arguments>\"");
			}
			return invocation.proceed();
		}
		if (web != null && method.equals(web.getAttribute(REQUEST_HANDLED_METHOD, RequestAttributes.SCOPE_REQUEST))) {
			// Protected by the HTTP door in this request already.
			return invocation.proceed();
		}
		@Nullable Object[] args = invocation.getArguments();
		Object keyValue = keyExpression(annotation.key())
			.getValue(new MethodBasedEvaluationContext(target, method, args, this.parameterNames));
		String operation = annotation.operation().isEmpty()
				? method.getDeclaringClass().getSimpleName() + "." + method.getName() : annotation.operation();
		if (keyValue == null && !annotation.keyRequired()) {
			// Most likely a bug in the caller or the expression: say so, and count it.
			logger.warn("The key expression " + annotation.key() + " of " + operation
					+ " yielded null: running it unprotected (keyRequired = true refuses such calls)");
			this.listener.onOutcome(IdempotencyOutcome.NULL_KEY, operation);
			return invocation.proceed();
		}
		Decision decision = this.engine.begin(new IdempotentCall(this.scopeSupplier.get(),
				(keyValue != null) ? List.of(keyValue.toString()) : List.of(),
				IdempotentCall.KeyFormat.chosen(annotation.keyFormat(), IdempotentCall.KeyFormat.OPAQUE),
				annotation.keyRequired(), operation, () -> fingerprint(method, args)));
		if (decision instanceof Decision.Replay replay) {
			try {
				return readResult(method, targetClass, replay.response());
			}
			catch (ResultTypeRefusedException ex) {
				throw ex;
			}
			catch (RuntimeException ex) {
				// It was read back when stored: the method or the result's class changed
				// since.
				throw new IllegalStateException("The stored result of " + operation + " for key " + keyValue
						+ " cannot be read back as " + method.getGenericReturnType().getTypeName()
						+ "; did its class change since it was stored?", ex);
			}
		}
		if (decision instanceof Decision.Reject reject) {
			if (web != null && reject.error().type() == IdempotencyErrorType.REQUEST_IN_FLIGHT) {
				// Whatever the request answers now depends on a call still running: never
				// store it under the request's own key, or its retries would replay "in
				// flight" for good.
				web.setAttribute(IdempotencyFilter.NOT_STORED_ATTRIBUTE,
						"a call it made (" + operation + ") was still in flight", RequestAttributes.SCOPE_REQUEST);
			}
			throw new IdempotencyRejectedException(reject.error(), this.problemTypeBase);
		}
		Reservation reservation = ((Decision.Proceed) decision).reservation();
		if (reservation == null) {
			return invocation.proceed();
		}
		Object result;
		try {
			result = invocation.proceed();
		}
		catch (Throwable ex) {
			this.engine.failed(reservation, "the method threw " + ex.getClass().getName());
			throw ex;
		}
		StoredResponse stored;
		try {
			stored = storable(method, targetClass, result);
		}
		catch (RuntimeException ex) {
			// Never store an answer that a retry could not read back: release the key
			// instead.
			this.engine.failed(reservation, "the result cannot be replayed: " + ex.getMessage());
			throw new IllegalStateException("The result of " + method.toGenericString()
					+ " cannot be replayed from JSON, so it is not stored and its key is released: " + ex.getMessage(),
					ex);
		}
		if (TRANSACTIONS_PRESENT && Transactions.completeAfterCommit(this.engine, reservation, stored, operation)) {
			return result;
		}
		if (!(this.engine.succeeded(reservation, stored) instanceof Answer.Recorded recorded)) {
			return result;
		}
		// Record-after-success: another call of the same request ran beside this one and
		// recorded its result first. Its effects are the ones that count: this call's own
		// writes in the caller's transaction must not commit, and it answers as that call
		// did.
		markTransactionRollbackOnly(operation);
		return readResult(method, targetClass, recorded.response());
	}

	private static final boolean TRANSACTIONS_PRESENT = ClassUtils.isPresent(
			"org.springframework.transaction.support.TransactionSynchronizationManager",
			IdempotentMethodInterceptor.class.getClassLoader());

	private static void markTransactionRollbackOnly(String operation) {
		if (TRANSACTIONS_PRESENT) {
			Transactions.markRollbackOnly(operation);
		}
	}

	/** Kept apart so that nothing of spring-tx is loaded when it is absent. */
	private static final class Transactions {

		/**
		 * Inside a caller's transaction that the store does not join, the result must not
		 * be recorded before that transaction commits: a rollback, or a crash before the
		 * commit, would leave a record answering for writes that never happened. Then the
		 * completion is registered to run after the commit, and the reservation is
		 * released if the transaction does not commit.
		 * @return whether the completion was deferred (else complete now)
		 */
		static boolean completeAfterCommit(IdempotencyEngine engine, Reservation reservation, StoredResponse stored,
				String operation) {
			if (!org.springframework.transaction.support.TransactionSynchronizationManager.isSynchronizationActive()
					|| !org.springframework.transaction.support.TransactionSynchronizationManager
						.isActualTransactionActive()
					|| engine.store().joinsCurrentTransaction()) {
				return false;
			}
			org.springframework.transaction.support.TransactionSynchronizationManager
				.registerSynchronization(new org.springframework.transaction.support.TransactionSynchronization() {

					@Override
					public void afterCommit() {
						if (engine.succeeded(reservation, stored) instanceof Answer.Recorded) {
							logger.info("Another call of " + operation + " with the same key recorded its result"
									+ " first; this call's transaction had already committed");
						}
					}

					@Override
					public void afterCompletion(int status) {
						if (status != STATUS_COMMITTED) {
							engine.failed(reservation, "the transaction around " + operation + " did not commit");
						}
					}

				});
			return true;
		}

		static void markRollbackOnly(String operation) {
			if (!org.springframework.transaction.support.TransactionSynchronizationManager
				.isActualTransactionActive()) {
				return;
			}
			try {
				org.springframework.transaction.interceptor.TransactionInterceptor.currentTransactionStatus()
					.setRollbackOnly();
				logger.info("Marked the transaction around " + operation
						+ " rollback-only: another call of the same request recorded its result first");
			}
			catch (org.springframework.transaction.NoTransactionException ex) {
				logger.warn("Another call of " + operation + " with the same key recorded its result first, but the"
						+ " active transaction is not managed by a TransactionInterceptor (@Transactional), so it"
						+ " could not be marked rollback-only: this call's own writes in it may commit");
			}
		}

	}

	/**
	 * The result as JSON, with its concrete class when the declared return type does not
	 * say how to read it back ({@code Object}, an interface or an abstract class), after
	 * checking that it reads back as a value of the declared return type.
	 */
	private StoredResponse storable(Method method, Class<?> targetClass, @Nullable Object result) {
		byte[] body = this.objectMapper.writeValueAsBytes(result);
		Map<String, List<String>> headers = Map.of();
		if (result != null && needsConcreteType(method.getReturnType())) {
			headers = Map.of(RESULT_TYPE_HEADER, List.of(result.getClass().getName()));
		}
		StoredResponse stored = new StoredResponse(200, headers, body);
		Object readBack = readResult(method, targetClass, stored);
		Class<?> declared = ClassUtils.resolvePrimitiveIfNecessary(method.getReturnType());
		if (readBack != null && declared != Void.class && !declared.isInstance(readBack)) {
			throw new IllegalStateException(
					"it reads back as " + readBack.getClass().getName() + ", not as " + declared.getName());
		}
		return stored;
	}

	private static boolean needsConcreteType(Class<?> declared) {
		if (declared.isPrimitive() || declared.isArray() || Collection.class.isAssignableFrom(declared)
				|| Map.class.isAssignableFrom(declared)) {
			// Jackson reads these as their declared (generic) type.
			return false;
		}
		return declared == Object.class || declared.isInterface() || Modifier.isAbstract(declared.getModifiers());
	}

	/** The method's annotation, else its class's; looked up once per method and class. */
	private @Nullable Found findAnnotation(Method method, Class<?> targetClass) {
		return this.annotations.computeIfAbsent(new MethodOnClass(method, targetClass), (key) -> {
			Idempotent onMethod = AnnotatedElementUtils.findMergedAnnotation(key.method(), Idempotent.class);
			if (onMethod != null) {
				return Optional.of(new Found(onMethod, true));
			}
			Idempotent onClass = AnnotatedElementUtils.findMergedAnnotation(key.targetClass(), Idempotent.class);
			return Optional.ofNullable((onClass != null) ? new Found(onClass, false) : null);
		}).orElse(null);
	}

	private record MethodOnClass(Method method, Class<?> targetClass) {
	}

	private record Found(Idempotent annotation, boolean onMethod) {
	}

	private Expression keyExpression(String expression) {
		return this.keyExpressions.computeIfAbsent(expression, this.parser::parseExpression);
	}

	private String fingerprint(Method method, @Nullable Object[] args) {
		String identity = method.getDeclaringClass().getName() + "#" + method.getName()
				+ List.of(method.getParameterTypes()).stream().map(Class::getName).toList();
		return Fingerprints.method(identity, this.objectMapper.writeValueAsBytes(args));
	}

	private @Nullable Object readResult(Method method, Class<?> targetClass, StoredResponse response) {
		if (method.getReturnType() == void.class) {
			return null;
		}
		List<String> concrete = response.headers().get(RESULT_TYPE_HEADER);
		JavaType type;
		if (concrete != null) {
			Class<?> resultClass = allowedResultClass(concrete.get(0), method, targetClass);
			if (!method.getReturnType().isAssignableFrom(resultClass)) {
				throw new IllegalStateException("The stored result of " + method.toGenericString() + " is a "
						+ resultClass.getName() + ", which the method does not return");
			}
			type = this.objectMapper.getTypeFactory().constructType(resultClass);
		}
		else {
			// Type variables resolved against the bean's class: List<T> in Batches<T> is
			// List<Receipt> in a ReceiptBatches extends Batches<Receipt>.
			type = javaType(ResolvableType.forMethodReturnType(method, targetClass));
		}
		return this.objectMapper.readValue(response.body(), type);
	}

	/**
	 * The class a stored result names, if the door may build it. The record comes from
	 * the store, and whoever can write the store would otherwise choose which class
	 * Jackson builds (for a method declared {@code Object}, any class on the class path).
	 * The declared return type cannot restrict that, and neither can the class loader (in
	 * a packaged application one loader loads the application and every library). So the
	 * name must be in the application's own packages (those of the bean, of its declared
	 * return type, and of {@code @SpringBootApplication}), or allowed by
	 * {@code idempotency.method.allowed-result-types}, or be a JDK value (string, number,
	 * collection, map, java.time) which Jackson reads without a bean deserializer. The
	 * name is checked before the class is loaded; it is loaded without being initialized.
	 */
	private Class<?> allowedResultClass(String name, Method method, Class<?> targetClass) {
		boolean jdk = isJdkName(name);
		if (!jdk && !isAllowedName(name, method, targetClass)) {
			throw new ResultTypeRefusedException(refusal(name, method, "it is outside the application's packages"));
		}
		Class<?> resultClass;
		try {
			resultClass = ClassUtils.forName(name, method.getDeclaringClass().getClassLoader());
		}
		catch (ClassNotFoundException | LinkageError ex) {
			throw new IllegalStateException("The stored result of " + method.toGenericString() + " names the class "
					+ name + ", which cannot be loaded", ex);
		}
		if (jdk && !isJdkValue(resultClass)) {
			throw new ResultTypeRefusedException(refusal(name, method, "it is a JDK class but not a value"));
		}
		return resultClass;
	}

	private boolean isAllowedName(String name, Method method, Class<?> targetClass) {
		List<String> allowed = new java.util.ArrayList<>(this.allowedResultTypes);
		allowed.add(targetClass.getPackageName());
		allowed.add(method.getDeclaringClass().getPackageName());
		allowed.add(method.getReturnType().getPackageName());
		for (String entry : allowed) {
			if (entry.isEmpty() || isJdkName(entry + ".")) {
				// The default package or a JDK package: never a prefix of everything.
				continue;
			}
			if (name.equals(entry) || name.startsWith(entry + ".") || name.startsWith(entry + "$")) {
				return true;
			}
		}
		return false;
	}

	private static boolean isJdkName(String name) {
		return name.startsWith("java.") || name.startsWith("javax.") || name.startsWith("jdk.")
				|| name.startsWith("sun.") || name.startsWith("com.sun.");
	}

	private static boolean isJdkValue(Class<?> type) {
		return type.getName().startsWith("java.") && (CharSequence.class.isAssignableFrom(type)
				|| Number.class.isAssignableFrom(type) || type == Boolean.class || type == Character.class
				|| type.isEnum() || type == java.util.UUID.class || type.getName().startsWith("java.time.")
				|| (type.getName().startsWith("java.util.")
						&& (Collection.class.isAssignableFrom(type) || Map.class.isAssignableFrom(type))));
	}

	private static String refusal(String name, Method method, String reason) {
		return "The stored result of " + method.toGenericString() + " names the class " + name
				+ ", which the method door does not build (" + reason + "); if the method returns it, add it or its"
				+ " package to idempotency.method.allowed-result-types";
	}

	/** A stored result names a class the door does not build. */
	private static final class ResultTypeRefusedException extends IllegalStateException {

		ResultTypeRefusedException(String message) {
			super(message);
		}

	}

	private JavaType javaType(ResolvableType type) {
		TypeFactory types = this.objectMapper.getTypeFactory();
		if (type.isArray()) {
			return types.constructArrayType(javaType(type.getComponentType()));
		}
		Class<?> raw = type.resolve(Object.class);
		if (!type.hasGenerics()) {
			return types.constructType(raw);
		}
		JavaType[] arguments = Arrays.stream(type.getGenerics()).map(this::javaType).toArray(JavaType[]::new);
		return types.constructParametricType(raw, arguments);
	}

}
