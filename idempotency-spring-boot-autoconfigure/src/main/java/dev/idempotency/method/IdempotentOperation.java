package dev.idempotency.method;

import java.lang.reflect.Method;
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
 */
record IdempotentOperation(Method method, Class<?> targetClass, boolean declaredOnMethod, String name,
		String keyExpression, @Nullable Expression key, boolean keyRequired, KeyFormat keyFormat, String identity) {

	private static final ParameterNameDiscoverer parameterNames = new DefaultParameterNameDiscoverer();

	/** Whether the annotation has a key expression: the method door protects it. */
	boolean hasKey() {
		return this.key != null;
	}

	/** The key expression's value for these arguments. */
	@Nullable Object keyValue(@Nullable Object target, @Nullable Object[] args) {
		if (this.key == null) {
			throw new IllegalStateException(this.name + " has no key expression");
		}
		return this.key.getValue(new MethodBasedEvaluationContext(target, this.method, args, parameterNames));
	}

	/** The call for the engine: keys are {@code OPAQUE} unless the annotation says. */
	IdempotentCall call(String scope, @Nullable Object keyValue, Supplier<String> fingerprint) {
		return new IdempotentCall(scope, (keyValue != null) ? List.of(keyValue.toString()) : List.of(),
				this.keyFormat.orElse(KeyFormat.OPAQUE), this.keyRequired, this.name, fingerprint, List::of,
				IdempotentCall.Door.METHOD);
	}

}
