package dev.idempotency.webflux;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import dev.idempotency.Idempotent;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.web.method.HandlerMethod;
import org.springframework.web.reactive.result.method.RequestMappingInfo;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping;

/**
 * Once every singleton exists (so every WebFlux handler mapping knows its handlers),
 * looks for the handler methods that carry {@code @Idempotent} without a key expression,
 * on the method or on its controller class, and fails the start-up naming all of them.
 */
class UnprotectedHandlersCheck implements SmartInitializingSingleton {

	private final ListableBeanFactory beanFactory;

	UnprotectedHandlersCheck(ListableBeanFactory beanFactory) {
		this.beanFactory = beanFactory;
	}

	@Override
	public void afterSingletonsInstantiated() {
		List<String> handlers = new ArrayList<>();
		for (RequestMappingHandlerMapping mapping : this.beanFactory
			.getBeansOfType(RequestMappingHandlerMapping.class, false, false)
			.values()) {
			for (Map.Entry<RequestMappingInfo, HandlerMethod> handler : mapping.getHandlerMethods().entrySet()) {
				HandlerMethod method = handler.getValue();
				if (isKeyless(annotation(method.getMethod(), method.getBeanType()))) {
					handlers.add(describe(method.getBeanType(), method.getMethod()) + " mapped to " + handler.getKey());
				}
			}
		}
		if (!handlers.isEmpty()) {
			handlers.sort(null);
			throw new UnprotectedIdempotentHandlersException(handlers);
		}
	}

	/** The method's annotation, else its class's, as the method door reads them. */
	private static @Nullable Idempotent annotation(Method method, Class<?> beanType) {
		Idempotent onMethod = AnnotatedElementUtils.findMergedAnnotation(method, Idempotent.class);
		return (onMethod != null) ? onMethod : AnnotatedElementUtils.findMergedAnnotation(beanType, Idempotent.class);
	}

	private static boolean isKeyless(@Nullable Idempotent annotation) {
		return annotation != null && annotation.key().isEmpty();
	}

	private static String describe(Class<?> beanType, Method method) {
		return beanType.getName() + "." + method.getName()
				+ Stream.of(method.getParameterTypes())
					.map(Class::getSimpleName)
					.collect(Collectors.joining(",", "(", ")"));
	}

}
