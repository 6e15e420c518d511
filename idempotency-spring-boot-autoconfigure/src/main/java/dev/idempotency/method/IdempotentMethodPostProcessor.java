package dev.idempotency.method;

import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;
import java.util.function.Supplier;

import dev.idempotency.Idempotent;
import org.aopalliance.intercept.MethodInterceptor;
import org.springframework.aop.Pointcut;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.aop.support.ComposablePointcut;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Proxies each bean with {@link Idempotent @Idempotent} on a method or on its class, and
 * applies the {@link IdempotentMethodInterceptor} to those methods (to every method for
 * an annotated class). Like Spring's own {@code @Async} and {@code @Retryable} support it
 * needs no AspectJ and no auto-proxy creator, adds itself to a bean that is already a
 * proxy, and follows the application's proxy settings: class-based proxies when
 * {@code spring.aop.proxy-target-class} is {@code true} (Boot's default), else
 * interface-based ones for beans with interfaces.
 * <p>
 * A method that returns a future, a publisher or a {@code ResponseEntity} is refused when
 * its bean is created.
 * <p>
 * It runs before the bean's other advisors, so that a retry is replayed without opening a
 * transaction and a result is stored only after the transaction around the method
 * committed.
 *
 * @since 0.1.0
 */
@SuppressWarnings("serial")
public class IdempotentMethodPostProcessor extends AbstractBeanFactoryAwareAdvisingPostProcessor {

	/** Reactive and callback types, matched by name as they are optional. */
	private static final List<String> ASYNCHRONOUS_TYPE_NAMES = List.of("org.reactivestreams.Publisher",
			"java.util.concurrent.Callable", "org.springframework.web.context.request.async.DeferredResult");

	private static final String HTTP_ENTITY = "org.springframework.http.HttpEntity";

	/**
	 * @param interceptor the interceptor, looked up on the first call: so that creating
	 * this post processor early does not create the engine, its store and their
	 * dependencies early
	 */
	public IdempotentMethodPostProcessor(Supplier<IdempotentMethodInterceptor> interceptor) {
		Pointcut onClass = new AnnotationMatchingPointcut(Idempotent.class, true);
		Pointcut onMethod = new AnnotationMatchingPointcut(null, Idempotent.class, true);
		MethodInterceptor lazy = (invocation) -> interceptor.get().invoke(invocation);
		this.advisor = new DefaultPointcutAdvisor(new ComposablePointcut(onClass).union(onMethod), lazy);
		setBeforeExistingAdvisors(true);
	}

	@Override
	protected boolean isEligible(Class<?> targetClass) {
		boolean eligible = super.isEligible(targetClass);
		if (eligible) {
			refuseUnreplayableMethods(targetClass);
		}
		return eligible;
	}

	/**
	 * Refuses what the method door cannot replay. A future or a publisher is not the
	 * operation's result: storing it would store nothing useful and replaying it would
	 * answer a result that never comes. An {@code HttpEntity} ({@code ResponseEntity})
	 * cannot be read back from JSON, so every call would run and then fail.
	 */
	private static void refuseUnreplayableMethods(Class<?> targetClass) {
		ReflectionUtils.doWithMethods(targetClass, (method) -> {
			Idempotent annotation = IdempotentOperationSource.annotation(method, targetClass);
			if (annotation == null || annotation.key().isEmpty()) {
				return;
			}
			String where = "@Idempotent(key = ...) cannot protect " + targetClass.getSimpleName() + "."
					+ method.getName() + ": it returns " + method.getReturnType().getName();
			if (isAsynchronous(method.getReturnType())) {
				throw new IllegalStateException(
						where + ", whose result comes after the call; return the result itself");
			}
			if (isAssignable(HTTP_ENTITY, method.getReturnType())) {
				throw new IllegalStateException(where + ", which cannot be replayed from JSON; return the body"
						+ " (without key = ..., the HTTP door replays whole responses)");
			}
		}, (method) -> !ReflectionUtils.isObjectMethod(method) && !method.isBridge() && !method.isSynthetic());
	}

	private static boolean isAsynchronous(Class<?> returnType) {
		return Future.class.isAssignableFrom(returnType) || CompletionStage.class.isAssignableFrom(returnType)
				|| ASYNCHRONOUS_TYPE_NAMES.stream().anyMatch((name) -> isAssignable(name, returnType));
	}

	private static boolean isAssignable(String typeName, Class<?> returnType) {
		ClassLoader classLoader = returnType.getClassLoader();
		if (!ClassUtils.isPresent(typeName, classLoader)) {
			return false;
		}
		return ClassUtils.resolveClassName(typeName, classLoader).isAssignableFrom(returnType);
	}

}
