package dev.idempotency.aspect;

import java.lang.reflect.Method;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import dev.idempotency.Idempotent;
import dev.idempotency.engine.Decision;
import dev.idempotency.engine.Fingerprints;
import dev.idempotency.engine.IdempotencyEngine;
import dev.idempotency.engine.IdempotentCall;
import dev.idempotency.engine.Reservation;
import dev.idempotency.store.StoredResponse;
import org.aspectj.lang.ProceedingJoinPoint;
import org.aspectj.lang.annotation.Around;
import org.aspectj.lang.annotation.Aspect;
import org.aspectj.lang.reflect.MethodSignature;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.expression.Expression;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.ObjectMapper;

/**
 * The method front door: {@link Idempotent @Idempotent} on any Spring bean method. The key comes
 * from the annotation's SpEL expression over the arguments; the fingerprint covers the method and
 * its arguments serialized as JSON; the return value is stored as JSON and replayed as the
 * method's declared (generic) return type. Handler methods already protected by the HTTP door in
 * the same request are left to it.
 */
@Aspect
public class IdempotentMethodAspect {

	private static final String REQUEST_HANDLED_METHOD = "dev.idempotency.web.IdempotencyInterceptor.method";

	private final IdempotencyEngine engine;

	private final ObjectMapper objectMapper;

	private final Supplier<String> scopeSupplier;

	private final SpelExpressionParser parser = new SpelExpressionParser();

	private final ParameterNameDiscoverer parameterNames = new DefaultParameterNameDiscoverer();

	private final Map<Method, Expression> keyExpressions = new ConcurrentHashMap<>();

	public IdempotentMethodAspect(IdempotencyEngine engine, ObjectMapper objectMapper, Supplier<String> scopeSupplier) {
		this.engine = engine;
		this.objectMapper = objectMapper;
		this.scopeSupplier = scopeSupplier;
	}

	@Around("@annotation(dev.idempotency.Idempotent)")
	public Object around(ProceedingJoinPoint joinPoint) throws Throwable {
		Method method = ((MethodSignature) joinPoint.getSignature()).getMethod();
		Idempotent annotation = AnnotatedElementUtils.findMergedAnnotation(method, Idempotent.class);
		RequestAttributes web = RequestContextHolder.getRequestAttributes();
		if (web != null && (annotation.key().isEmpty()
				|| method.equals(web.getAttribute(REQUEST_HANDLED_METHOD, RequestAttributes.SCOPE_REQUEST)))) {
			// A handler method: the HTTP door protects it with the request's header.
			return joinPoint.proceed();
		}
		if (annotation.key().isEmpty()) {
			throw new IllegalStateException("@Idempotent on " + method.toGenericString()
					+ " called outside a web request needs key = \"<SpEL over the arguments>\"");
		}
		Object[] args = joinPoint.getArgs();
		Object keyValue = keyExpression(method, annotation.key())
			.getValue(new MethodBasedEvaluationContext(joinPoint.getTarget(), method, args, this.parameterNames));
		String operation = annotation.operation().isEmpty()
				? method.getDeclaringClass().getSimpleName() + "." + method.getName() : annotation.operation();
		Decision decision = this.engine.begin(new IdempotentCall(this.scopeSupplier.get(),
				(keyValue != null) ? List.of(keyValue.toString()) : List.of(), IdempotentCall.KeyFormat.OPAQUE,
				annotation.keyRequired(), operation, () -> fingerprint(method, args)));
		if (decision instanceof Decision.Replay replay) {
			return readResult(method, replay.response());
		}
		if (decision instanceof Decision.Reject reject) {
			throw new IdempotencyRejectedException(reject.error());
		}
		Reservation reservation = ((Decision.Proceed) decision).reservation();
		if (reservation == null) {
			return joinPoint.proceed();
		}
		Object result;
		try {
			result = joinPoint.proceed();
		}
		catch (Throwable ex) {
			this.engine.failed(reservation, "the method threw " + ex.getClass().getName());
			throw ex;
		}
		byte[] body;
		try {
			body = this.objectMapper.writeValueAsBytes(result);
		}
		catch (RuntimeException ex) {
			this.engine.failed(reservation, "the result could not be serialized: " + ex.getMessage());
			throw new IllegalStateException("The result of " + method.toGenericString()
					+ " cannot be stored for replay as JSON", ex);
		}
		this.engine.succeeded(reservation, new StoredResponse(200, Map.of(), body));
		return result;
	}

	private Expression keyExpression(Method method, String expression) {
		return this.keyExpressions.computeIfAbsent(method, (m) -> this.parser.parseExpression(expression));
	}

	private String fingerprint(Method method, Object[] args) {
		String identity = method.getDeclaringClass().getName() + "#" + method.getName()
				+ List.of(method.getParameterTypes()).stream().map(Class::getName).toList();
		return Fingerprints.method(identity, this.objectMapper.writeValueAsBytes(args));
	}

	private Object readResult(Method method, StoredResponse response) {
		if (method.getReturnType() == void.class) {
			return null;
		}
		JavaType type = this.objectMapper.getTypeFactory().constructType(method.getGenericReturnType());
		return this.objectMapper.readValue(response.body(), type);
	}

}
