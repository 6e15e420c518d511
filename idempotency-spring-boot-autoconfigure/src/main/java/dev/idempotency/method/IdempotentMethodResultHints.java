package dev.idempotency.method;

import java.lang.reflect.Method;
import java.lang.reflect.Type;
import java.util.LinkedHashSet;
import java.util.Set;

import dev.idempotency.Idempotent;
import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.BindingReflectionHintsRegistrar;
import org.springframework.beans.factory.aot.BeanRegistrationAotContribution;
import org.springframework.beans.factory.aot.BeanRegistrationAotProcessor;
import org.springframework.beans.factory.support.RegisteredBean;
import org.springframework.util.ReflectionUtils;

/**
 * Reflection for JSON binding of the declared return types of a bean's
 * {@link Idempotent @Idempotent} methods, for a GraalVM native image: the method door
 * stores a result as JSON with Jackson and reads it back as the declared (generic) return
 * type. A result whose class the declared type does not name (a method declared
 * {@code Object} or an interface) needs {@code @RegisterReflectionForBinding} of its
 * class by the application. Registered in {@code META-INF/spring/aot.factories}.
 */
final class IdempotentMethodResultHints implements BeanRegistrationAotProcessor {

	@Override
	public @Nullable BeanRegistrationAotContribution processAheadOfTime(RegisteredBean registeredBean) {
		Class<?> beanClass = registeredBean.getBeanClass();
		Set<Type> returnTypes = new LinkedHashSet<>();
		for (Method method : ReflectionUtils.getUniqueDeclaredMethods(beanClass,
				ReflectionUtils.USER_DECLARED_METHODS)) {
			if (method.getReturnType() != void.class && !ReflectionUtils.isObjectMethod(method)
					&& IdempotentOperationSource.annotation(method, beanClass) != null) {
				returnTypes.add(method.getGenericReturnType());
			}
		}
		if (returnTypes.isEmpty()) {
			return null;
		}
		return (generationContext, code) -> new BindingReflectionHintsRegistrar().registerReflectionHints(
				generationContext.getRuntimeHints().reflection(), returnTypes.toArray(Type[]::new));
	}

}
