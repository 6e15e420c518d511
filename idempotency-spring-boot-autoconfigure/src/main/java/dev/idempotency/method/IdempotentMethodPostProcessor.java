package dev.idempotency.method;

import java.lang.reflect.Method;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Future;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import dev.idempotency.Idempotent;
import org.aopalliance.intercept.MethodInterceptor;
import org.springframework.aop.Pointcut;
import org.springframework.aop.framework.AopInfrastructureBean;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.aop.support.ComposablePointcut;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.expression.ParseException;
import org.springframework.expression.spel.standard.SpelExpressionParser;
import org.springframework.stereotype.Controller;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Proxies each bean with {@link Idempotent @Idempotent} on a method or on its class,
 * except a controller whose annotations have no key expression (the HTTP door's alone),
 * and applies the {@link IdempotentMethodInterceptor} to those methods (to every method
 * for an annotated class). Like Spring's own {@code @Async} and {@code @Retryable}
 * support it needs no AspectJ and no auto-proxy creator, adds itself to a bean that is
 * already a proxy, and follows the application's proxy settings: class-based proxies when
 * {@code spring.aop.proxy-target-class} is {@code true} (Boot's default), else
 * interface-based ones for beans with interfaces.
 * <p>
 * A method whose key or fingerprint expression does not parse, whose arguments the door
 * cannot read without a fingerprint expression, or that returns a future, a publisher
 * other than Reactor's {@code Mono} and {@code Flux} (which the door follows), or a
 * {@code ResponseEntity} (also in a {@code Mono}) is refused when its bean is created,
 * with an {@link InvalidIdempotentMethodException} naming the bean.
 * <p>
 * It runs before the bean's other advisors, so that a retry is replayed without opening a
 * transaction and a result is stored only after the transaction around the method
 * committed.
 */
@SuppressWarnings("serial")
class IdempotentMethodPostProcessor extends AbstractBeanFactoryAwareAdvisingPostProcessor {

	/** Reactive and callback types, matched by name as they are optional. */
	private static final List<String> ASYNCHRONOUS_TYPE_NAMES = List.of("org.reactivestreams.Publisher",
			"java.util.concurrent.Callable", "org.springframework.web.context.request.async.DeferredResult");

	private static final String HTTP_ENTITY = "org.springframework.http.HttpEntity";

	private final SpelExpressionParser parser = new SpelExpressionParser();

	/**
	 * @param interceptor the interceptor, looked up on the first call: so that creating
	 * this post processor early does not create the engine, its store and their
	 * dependencies early
	 */
	public IdempotentMethodPostProcessor(Supplier<IdempotentMethodInterceptor> interceptor) {
		Pointcut onClass = new AnnotationMatchingPointcut(Idempotent.class, true);
		Pointcut onMethod = new AnnotationMatchingPointcut(null, Idempotent.class, true);
		MethodInterceptor lazy = (invocation) -> interceptor.get().invoke(invocation);
		this.advisor = new DefaultPointcutAdvisor(new ComposablePointcut(onClass).union(onMethod)
			.intersection(IdempotentMethodPostProcessor::hasKeyOrIsNoController), lazy);
		setBeforeExistingAdvisors(true);
	}

	/**
	 * Whether the method door proxies a class with {@code @Idempotent} on it or on a
	 * method: unless it is a controller whose annotations have no key expression. Those
	 * handlers are the HTTP door's alone (the header is their key), so the controller is
	 * left as it is. Any other bean with a keyless annotation is proxied, so that calling
	 * such a method outside a web request fails with the reason.
	 */
	static boolean hasKeyOrIsNoController(Class<?> targetClass) {
		if (!AnnotatedElementUtils.hasAnnotation(targetClass, Controller.class)) {
			return true;
		}
		Idempotent onClass = AnnotatedElementUtils.findMergedAnnotation(targetClass, Idempotent.class);
		if (onClass != null && !onClass.key().isEmpty()) {
			return true;
		}
		for (Method method : ReflectionUtils.getUniqueDeclaredMethods(targetClass,
				ReflectionUtils.USER_DECLARED_METHODS)) {
			Idempotent onMethod = AnnotatedElementUtils.findMergedAnnotation(method, Idempotent.class);
			if (onMethod != null && !onMethod.key().isEmpty()) {
				return true;
			}
		}
		return false;
	}

	/**
	 * Checks the bean's {@code @Idempotent} methods before proxying it, also when it is
	 * already a proxy (then the base class asks only about its class, without its name),
	 * and those of a controller left to the HTTP door (for an attribute it would ignore).
	 */
	@Override
	public Object postProcessAfterInitialization(Object bean, String beanName) {
		if (!(bean instanceof AopInfrastructureBean)) {
			Class<?> targetClass = AopUtils.getTargetClass(bean);
			if (isEligible(targetClass) || !hasKeyOrIsNoController(targetClass)) {
				checkMethods(beanName, targetClass);
			}
		}
		return super.postProcessAfterInitialization(bean, beanName);
	}

	/**
	 * Refuses what the method door cannot protect, naming the bean and the method, so
	 * that the start-up fails instead of every call. A key expression, and a fingerprint
	 * expression, must parse; a fingerprint expression without a key expression would be
	 * ignored (the HTTP door fingerprints the request). Without a fingerprint expression
	 * the door must be able to read every argument's state: a call compared on less would
	 * be answered with another call's result. A future or a publisher is not the
	 * operation's result: storing it would store nothing useful and replaying it would
	 * answer a result that never comes. A Reactor {@code Mono} or {@code Flux} is the
	 * exception: the door runs it when it is subscribed and stores what it gives (see
	 * {@link ReactiveMethodDoor}). An {@code HttpEntity} ({@code ResponseEntity}) cannot
	 * be read back from JSON, so every call would run and then fail.
	 * @throws InvalidIdempotentMethodException for the first such method
	 */
	private void checkMethods(String beanName, Class<?> targetClass) {
		ReflectionUtils.doWithMethods(targetClass, (method) -> {
			Idempotent annotation = IdempotentOperationSource.annotation(method, targetClass);
			if (annotation == null) {
				return;
			}
			String where = targetClass.getName() + "." + method.getName()
					+ Stream.of(method.getParameterTypes())
						.map(Class::getName)
						.collect(Collectors.joining(",", "(", ")"));
			if (annotation.key().isEmpty()) {
				if (!annotation.fingerprint().isEmpty()) {
					throw new InvalidIdempotentMethodException(beanName, where,
							"fingerprint = \"" + annotation.fingerprint() + "\" without key: the HTTP door protects"
									+ " this method with the Idempotency-Key header and fingerprints the request",
							"Remove fingerprint, or add key = \"<SpEL over the arguments>\" for the method door.",
							null);
				}
				return;
			}
			parse(beanName, where, annotation.key(), "key",
					"Write key as a SpEL expression over the method's arguments, such as \"#command.requestId\""
							+ " or \"#p0\".");
			if (!annotation.fingerprint().isEmpty()) {
				parse(beanName, where, annotation.fingerprint(), "fingerprint",
						"Write fingerprint as a SpEL expression over the method's arguments, such as"
								+ " \"{#orderId, #upload.name}\".");
			}
			else {
				checkArguments(beanName, where, method, targetClass, annotation);
			}
			String returns = "@Idempotent(key = ...) cannot protect " + targetClass.getSimpleName() + "."
					+ method.getName() + ": it returns " + method.getReturnType().getName();
			IdempotentOperation.Returns reactive = IdempotentOperation.Returns.of(method.getReturnType());
			Class<?> resultClass = reactive.resultType(method, targetClass).resolve(Object.class);
			if (reactive == IdempotentOperation.Returns.VALUE && isAsynchronous(method.getReturnType())) {
				throw new InvalidIdempotentMethodException(beanName, where,
						returns + ", whose result comes after the call and which the method door does not follow (it"
								+ " follows a Reactor Mono or Flux)",
						"Return the result itself, or a Mono or a Flux that does the work when subscribed"
								+ " (Mono.fromFuture(() -> ...), Mono.from(publisher), Flux.from(publisher)).",
						null);
			}
			if (isAssignable(HTTP_ENTITY, resultClass)) {
				throw new InvalidIdempotentMethodException(beanName, where,
						returns + ((reactive != IdempotentOperation.Returns.VALUE) ? " of " + resultClass.getName()
								: "") + ", which cannot be replayed from JSON; return the body",
						"Return the body (without key = ..., the HTTP door replays whole responses).", null);
			}
		}, (method) -> !ReflectionUtils.isObjectMethod(method) && !method.isBridge() && !method.isSynthetic());
	}

	private void parse(String beanName, String where, String expression, String attribute, String action) {
		try {
			this.parser.parseExpression(expression);
		}
		catch (ParseException ex) {
			throw new InvalidIdempotentMethodException(beanName, where, attribute, expression,
					"the " + attribute + " expression does not parse: " + ex.getMessage(), action, ex);
		}
	}

	/**
	 * Refuses a method with an argument whose state the door cannot read, saying how to
	 * name what identifies a call instead.
	 */
	private static void checkArguments(String beanName, String where, Method method, Class<?> targetClass,
			Idempotent annotation) {
		List<String> names = IdempotentOperation.parameterNames(method);
		String problem = CanonicalArguments.problem(method, targetClass, names);
		if (problem == null) {
			return;
		}
		String example = names.stream().map((name) -> "#" + name).collect(Collectors.joining(", ", "{", "}"));
		throw new InvalidIdempotentMethodException(beanName, where,
				problem + "; a call would be compared with others on less than the method reads",
				"Name what identifies a call: @Idempotent(key = \"" + annotation.key() + "\", fingerprint = \""
						+ example + "\"), with each argument the door cannot read replaced by what identifies it"
						+ " (a SpEL expression over the arguments, whose value is compared instead of the arguments:"
						+ " values, enums, arrays, collections, maps, records and classes of such fields); or pass"
						+ " that content itself (a String, a byte[], a record of values) instead of the argument.",
				null);
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
