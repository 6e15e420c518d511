package dev.idempotency.method;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

import dev.idempotency.Idempotent;
import dev.idempotency.core.KeyFormat;
import dev.idempotency.core.internal.IdempotentCall;
import org.jspecify.annotations.Nullable;
import org.springframework.context.expression.MethodBasedEvaluationContext;
import org.springframework.core.DefaultParameterNameDiscoverer;
import org.springframework.core.ParameterNameDiscoverer;
import org.springframework.expression.Expression;

/**
 * The settings of {@link Idempotent @Idempotent} for one method of one bean class, read
 * once by the {@link IdempotentOperationSource}.
 *
 * @param method the method that runs (the most specific one on the bean's class)
 * @param targetClass the bean's class
 * @param declaredOnMethod whether the annotation is on the method (else on the class)
 * @param name the operation's name, kept with the record
 * @param keyExpression the SpEL source of the key, empty for none (a handler method,
 * which the HTTP door protects)
 * @param key the parsed {@code keyExpression}, {@code null} for none
 * @param keyRequired whether a call whose key is {@code null} is refused
 * @param keyFormat the annotation's key format
 * @param identity the method as the fingerprint names it
 * @param fingerprint the parsed fingerprint expression, whose value identifies a call
 * instead of its arguments; {@code null} for none (the arguments do)
 * @param parameterNames the names of the method's parameters ({@code p0}, ... where the
 * class was compiled without them), for errors
 */
record IdempotentOperation(Method method, Class<?> targetClass, boolean declaredOnMethod, String name,
		String keyExpression, @Nullable Expression key, boolean keyRequired, KeyFormat keyFormat, String identity,
		@Nullable Expression fingerprint, List<String> parameterNames) {

	private static final ParameterNameDiscoverer parameterNameDiscoverer = new DefaultParameterNameDiscoverer();

	/** The names of a method's parameters, {@code p0}, ... for those it does not know. */
	static List<String> parameterNames(Method method) {
		@Nullable String[] names = parameterNameDiscoverer.getParameterNames(method);
		List<String> result = new ArrayList<>(method.getParameterCount());
		for (int i = 0; i < method.getParameterCount(); i++) {
			String name = (names != null) ? names[i] : null;
			result.add((name != null) ? name : "p" + i);
		}
		return List.copyOf(result);
	}

	/** Whether the annotation has a key expression: the method door protects it. */
	boolean hasKey() {
		return this.key != null;
	}

	/** The key expression's value for these arguments. */
	@Nullable Object keyValue(@Nullable Object target, @Nullable Object[] args) {
		if (this.key == null) {
			throw new IllegalStateException(this.name + " has no key expression");
		}
		return this.key.getValue(context(target, args));
	}

	/**
	 * What identifies a call in its fingerprint: the fingerprint expression's value in
	 * the door's canonical form, else the arguments'.
	 * @throws CanonicalArguments.UnreadableValueException if a value is of a class whose
	 * state the door cannot read
	 */
	byte[] canonicalCall(@Nullable Object target, @Nullable Object[] args) {
		Expression expression = this.fingerprint;
		if (expression == null) {
			return CanonicalArguments.arguments(args, this.parameterNames);
		}
		return CanonicalArguments.value(expression.getValue(context(target, args)));
	}

	private MethodBasedEvaluationContext context(@Nullable Object target, @Nullable Object[] args) {
		return new MethodBasedEvaluationContext(target, this.method, args, parameterNameDiscoverer);
	}

	/** The call for the engine: keys are {@code OPAQUE} unless the annotation says. */
	IdempotentCall call(String scope, @Nullable Object keyValue, Supplier<String> fingerprint) {
		return new IdempotentCall(scope, (keyValue != null) ? List.of(keyValue.toString()) : List.of(),
				this.keyFormat.orElse(KeyFormat.OPAQUE), this.keyRequired, this.name, fingerprint, List::of,
				IdempotentCall.Door.METHOD);
	}

}
