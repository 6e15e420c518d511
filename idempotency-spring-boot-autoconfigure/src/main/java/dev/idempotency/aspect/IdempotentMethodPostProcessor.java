package dev.idempotency.aspect;

import java.util.function.Supplier;

import dev.idempotency.Idempotent;
import org.aopalliance.intercept.MethodInterceptor;
import org.springframework.aop.Pointcut;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.aop.support.ComposablePointcut;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;

/**
 * Proxies each bean with {@link Idempotent @Idempotent} on a method or on its class, and applies
 * the {@link IdempotentMethodInterceptor} to those methods (to every method for an annotated
 * class). Like Spring's own {@code @Async} and {@code @Retryable} support it needs no AspectJ and
 * no auto-proxy creator, adds itself to a bean that is already a proxy, and follows the
 * application's proxy settings: class-based proxies when {@code spring.aop.proxy-target-class} is
 * {@code true} (Boot's default), else interface-based ones for beans with interfaces.
 * <p>
 * It runs before the bean's other advisors, so that a retry is replayed without opening a
 * transaction and a result is stored only after the transaction around the method committed.
 */
@SuppressWarnings("serial")
public class IdempotentMethodPostProcessor extends AbstractBeanFactoryAwareAdvisingPostProcessor {

	/**
	 * @param interceptor the interceptor, looked up on the first call: so that creating this post
	 * processor early does not create the engine, its store and their dependencies early
	 */
	public IdempotentMethodPostProcessor(Supplier<IdempotentMethodInterceptor> interceptor) {
		Pointcut onClass = new AnnotationMatchingPointcut(Idempotent.class, true);
		Pointcut onMethod = new AnnotationMatchingPointcut(null, Idempotent.class, true);
		MethodInterceptor lazy = (invocation) -> interceptor.get().invoke(invocation);
		this.advisor = new DefaultPointcutAdvisor(new ComposablePointcut(onClass).union(onMethod), lazy);
		setBeforeExistingAdvisors(true);
	}

}
