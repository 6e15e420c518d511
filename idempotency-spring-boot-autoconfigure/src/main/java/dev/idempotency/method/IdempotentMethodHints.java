package dev.idempotency.method;

import java.lang.reflect.Method;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.util.LinkedHashSet;
import java.util.Set;

import dev.idempotency.Idempotent;
import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.BindingReflectionHintsRegistrar;
import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.ReflectionHints;
import org.springframework.beans.factory.aot.BeanRegistrationAotContribution;
import org.springframework.beans.factory.aot.BeanRegistrationAotProcessor;
import org.springframework.beans.factory.support.RegisteredBean;
import org.springframework.util.ReflectionUtils;

/**
 * Reflection for the method door in a GraalVM native image, for each bean's
 * {@link Idempotent @Idempotent} methods with a key expression: JSON binding of their
 * declared return types (the door stores a result as JSON with Jackson and reads it back
 * as the declared, generic, type), and access to the fields of the argument classes that
 * the fingerprint reads field by field (as far as the declared parameter types name
 * them). A class the declarations do not name (a result or an argument declared
 * {@code Object} or an interface) needs {@code @RegisterReflectionForBinding} of its
 * class by the application. Registered in {@code META-INF/spring/aot.factories}.
 */
final class IdempotentMethodHints implements BeanRegistrationAotProcessor {

	@Override
	public @Nullable BeanRegistrationAotContribution processAheadOfTime(RegisteredBean registeredBean) {
		Class<?> beanClass = registeredBean.getBeanClass();
		Set<Type> returnTypes = new LinkedHashSet<>();
		Set<Class<?>> argumentClasses = new LinkedHashSet<>();
		for (Method method : ReflectionUtils.getUniqueDeclaredMethods(beanClass,
				ReflectionUtils.USER_DECLARED_METHODS)) {
			Idempotent annotation = ReflectionUtils.isObjectMethod(method) ? null
					: IdempotentOperationSource.annotation(method, beanClass);
			if (annotation == null) {
				continue;
			}
			Type resultType = method.getGenericReturnType();
			if (IdempotentOperation.Returns.of(method.getReturnType()) != IdempotentOperation.Returns.VALUE
					&& resultType instanceof ParameterizedType reactive) {
				// A Mono's value, a Flux's elements.
				resultType = reactive.getActualTypeArguments()[0];
			}
			if (method.getReturnType() != void.class) {
				returnTypes.add(resultType);
			}
			if (!annotation.key().isEmpty() && annotation.fingerprint().isEmpty()) {
				argumentClasses.addAll(CanonicalArguments.classesReadByFields(method, beanClass));
			}
		}
		if (returnTypes.isEmpty() && argumentClasses.isEmpty()) {
			return null;
		}
		return (generationContext, code) -> {
			ReflectionHints reflection = generationContext.getRuntimeHints().reflection();
			new BindingReflectionHintsRegistrar().registerReflectionHints(reflection, returnTypes.toArray(Type[]::new));
			argumentClasses.forEach((type) -> reflection.registerType(type, MemberCategory.ACCESS_DECLARED_FIELDS));
		};
	}

}
