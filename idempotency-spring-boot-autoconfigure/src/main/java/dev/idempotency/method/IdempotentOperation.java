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
import org.springframework.core.ResolvableType;
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
 * @param returns whether the method returns its result, or a {@code Mono} or a
 * {@code Flux} of it
 * @param resultType the type of what is stored and replayed, resolved against the bean's
 * class: the return type, a {@code Mono}'s value type, or a {@code List} of a
 * {@code Flux}'s element type
 */
record IdempotentOperation(Method method, Class<?> targetClass, boolean declaredOnMethod, String name,
		String keyExpression, @Nullable Expression key, boolean keyRequired, KeyFormat keyFormat, String identity,
		@Nullable Expression fingerprint, List<String> parameterNames, Returns returns, ResolvableType resultType) {

	/**
	 * How a method gives its result: returned, or through a Reactor {@code Mono} or
	 * {@code Flux} (matched by name, as Reactor is optional; exactly those classes, as a
	 * replay is one of them).
	 */
	enum Returns {

		/** The result is the return value. */
		VALUE,

		/**
		 * The result is the value of the returned {@code Mono}, none for an empty one.
		 */
		MONO,

		/** The result is the elements of the returned {@code Flux}, stored as a list. */
		FLUX;

		static final String MONO_CLASS = "reactor.core.publisher.Mono";

		static final String FLUX_CLASS = "reactor.core.publisher.Flux";

		static Returns of(Class<?> returnType) {
			return switch (returnType.getName()) {
				case MONO_CLASS -> MONO;
				case FLUX_CLASS -> FLUX;
				default -> VALUE;
			};
		}

		/** The type of what is stored, for a method of a bean class. */
		ResolvableType resultType(Method method, Class<?> targetClass) {
			// Type variables resolved against the bean's class: List<T> in Batches<T> is
			// List<Receipt> in a ReceiptBatches extends Batches<Receipt>.
			ResolvableType returnType = ResolvableType.forMethodReturnType(method, targetClass);
			return switch (this) {
				case VALUE -> returnType;
				case MONO -> returnType.getGeneric(0);
				case FLUX -> ResolvableType.forClassWithGenerics(List.class, returnType.getGeneric(0));
			};
		}

	}

	/** The class of what is stored: {@code void} or {@code Void} for nothing. */
	Class<?> resultClass() {
		return this.resultType.resolve(Object.class);
	}

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
		Object value = this.key.getValue(context(target, args));
		if (value != null && !(value instanceof CharSequence) && !(value instanceof Number)
				&& (value.getClass().isArray() || !ownsText(value.getClass()))) {
			// Its text would be its identity ("[B@1f2a"), another on every call: a key no
			// retry finds again, so the call would never be protected.
			throw new IllegalStateException("The key expression " + this.keyExpression + " of " + this.name
					+ " yields a " + value.getClass().getTypeName() + ", whose text is its identity (" + value
					+ "), different for every call: make it yield the key's text (a String, a number, a UUID)");
		}
		return value;
	}

	/** Whether a class says its own text: not {@code Object}'s identity. */
	private static boolean ownsText(Class<?> type) {
		java.lang.reflect.Method toString = org.springframework.util.ReflectionUtils.findMethod(type, "toString");
		return toString != null && toString.getDeclaringClass() != Object.class;
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
