package dev.idempotency.method;

import java.lang.reflect.Method;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

import dev.idempotency.Idempotent;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.support.AopUtils;
import org.springframework.core.MethodClassKey;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.expression.Expression;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.util.ReflectionUtils;

/**
 * Finds {@link Idempotent @Idempotent} for a method called on a bean (on the method, else
 * on the bean's class) and reads it into an {@link IdempotentOperation}, its key
 * expression parsed: once per method and bean class, as Spring's
 * {@code AnnotationTransactionAttributeSource} does for {@code @Transactional}.
 */
final class IdempotentOperationSource {

	private final SpelExpressionParser parser = new SpelExpressionParser();

	private final Map<MethodClassKey, Optional<IdempotentOperation>> operations = new ConcurrentHashMap<>();

	/**
	 * The operation of a method called on a bean of this class.
	 * @param method the method called (possibly an interface's)
	 * @param targetClass the bean's class
	 * @return {@code null} if neither the method nor the class has the annotation, or for
	 * a method of {@code Object}
	 * @throws org.springframework.expression.ParseException if the key or fingerprint
	 * expression does not parse (not cached: every call says so; the
	 * {@link IdempotentMethodPostProcessor} refuses such a method when its bean is
	 * created, so a call meets it only on a bean the post-processor did not see)
	 */
	@Nullable IdempotentOperation find(Method method, Class<?> targetClass) {
		MethodClassKey cacheKey = new MethodClassKey(method, targetClass);
		Optional<IdempotentOperation> cached = this.operations.get(cacheKey);
		if (cached == null) {
			cached = Optional.ofNullable(read(AopUtils.getMostSpecificMethod(method, targetClass), targetClass));
			this.operations.put(cacheKey, cached);
		}
		return cached.orElse(null);
	}

	/**
	 * The annotation that applies to a method of a bean class: the method's, else the
	 * class's (then it applies to each of its methods).
	 */
	static @Nullable Idempotent annotation(Method method, Class<?> targetClass) {
		Idempotent onMethod = AnnotatedElementUtils.findMergedAnnotation(method, Idempotent.class);
		return (onMethod != null) ? onMethod
				: AnnotatedElementUtils.findMergedAnnotation(targetClass, Idempotent.class);
	}

	private @Nullable IdempotentOperation read(Method method, Class<?> targetClass) {
		if (ReflectionUtils.isObjectMethod(method)) {
			return null;
		}
		Idempotent annotation = annotation(method, targetClass);
		if (annotation == null) {
			return null;
		}
		boolean onMethod = AnnotatedElementUtils.hasAnnotation(method, Idempotent.class);
		String name = annotation.operation().isEmpty()
				? method.getDeclaringClass().getSimpleName() + "." + method.getName() : annotation.operation();
		IdempotentOperation.Returns returns = IdempotentOperation.Returns.of(method.getReturnType());
		String identity = method.getDeclaringClass().getName() + "#" + method.getName()
				+ List.of(method.getParameterTypes()).stream().map(Class::getName).toList();
		return new IdempotentOperation(method, targetClass, onMethod, name, annotation.key(), parse(annotation.key()),
				annotation.keyRequired(), annotation.keyFormat(), identity, parse(annotation.fingerprint()),
				IdempotentOperation.parameterNames(method), returns, returns.resultType(method, targetClass));
	}

	private @Nullable Expression parse(String expression) {
		return expression.isEmpty() ? null : this.parser.parseExpression(expression);
	}

}
