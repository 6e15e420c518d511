package dev.idempotency.method;

import java.io.InputStream;
import java.io.Reader;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Spliterator;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;
import java.util.concurrent.Future;
import java.util.function.Supplier;
import java.util.stream.BaseStream;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import dev.idempotency.Idempotent;
import org.aopalliance.intercept.MethodInterceptor;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.Pointcut;
import org.springframework.aop.framework.AopInfrastructureBean;
import org.springframework.aop.framework.ProxyFactory;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.aop.support.ComposablePointcut;
import org.springframework.aop.support.AopUtils;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.core.ResolvableType;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.MergedAnnotations;
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
 * cannot read without a fingerprint expression, that a proxy never sees (private, final,
 * static), that returns a future, a publisher other than Reactor's {@code Mono} and
 * {@code Flux} (which the door follows), what its caller reads once (a stream), a
 * {@code ResponseEntity} (also in a {@code Mono}) or elements JSON cannot read back (an
 * interface or an abstract class), and a keyless annotation outside a controller (which
 * nothing would protect), are refused when the bean is created, with an
 * {@link InvalidIdempotentMethodException} naming the bean.
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

	private static final String REQUEST_MAPPING = "org.springframework.web.bind.annotation.RequestMapping";

	/** Jackson's annotation for a type read polymorphically (its class kept in JSON). */
	private static final String JSON_TYPE_INFO = "com.fasterxml.jackson.annotation.JsonTypeInfo";

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
	 * left as it is. Any other bean with a keyless annotation is checked, and fails the
	 * start-up ({@link #checkMethods}).
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
	 * Whether the class is a controller (or has request mappings): its handler methods
	 * are the HTTP door's when their annotation has no key.
	 */
	private static boolean isHandlerClass(Class<?> targetClass) {
		if (AnnotatedElementUtils.hasAnnotation(targetClass, Controller.class)) {
			return true;
		}
		for (Method method : ReflectionUtils.getUniqueDeclaredMethods(targetClass,
				ReflectionUtils.USER_DECLARED_METHODS)) {
			if (isHandlerMethod(method)) {
				return true;
			}
		}
		return false;
	}

	/** Whether a request mapping (on it, or on what it overrides) makes it a handler. */
	private static boolean isHandlerMethod(Method method) {
		return MergedAnnotations.from(method, MergedAnnotations.SearchStrategy.TYPE_HIERARCHY)
			.isPresent(REQUEST_MAPPING);
	}

	/**
	 * A controller is proxied by its class whatever {@code spring.aop.proxy-target-class}
	 * says: behind an interface-based proxy its handler methods (of its class, not of its
	 * interfaces) are no longer found, and every endpoint answers {@code 404}.
	 */
	@Override
	protected ProxyFactory prepareProxyFactory(Object bean, String beanName) {
		ProxyFactory proxyFactory = super.prepareProxyFactory(bean, beanName);
		if (isHandlerClass(AopUtils.getTargetClass(bean))) {
			proxyFactory.setProxyTargetClass(true);
		}
		return proxyFactory;
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
		boolean handlerClass = isHandlerClass(targetClass);
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
				if (handlerClass && AnnotatedElementUtils.hasAnnotation(method, Idempotent.class)
						&& !isHandlerMethod(method)) {
					throw new InvalidIdempotentMethodException(beanName, where,
							"@Idempotent without key = ... on a controller method that is not a handler (no request"
									+ " mapping): the HTTP door protects requests, and no request reaches this method,"
									+ " so nothing would protect it",
							"Add key = \"<SpEL over the arguments>\" for the method door, or put the annotation on"
									+ " the handler method.",
							null);
				}
				if (!handlerClass) {
					throw new InvalidIdempotentMethodException(beanName, where,
							"@Idempotent without key = ... on a bean that is not a controller: the HTTP door protects"
									+ " a controller's handler methods with the Idempotency-Key header, and this method"
									+ " is not one, so nothing would protect it",
							"Add key = \"<SpEL over the arguments>\" for the method door, or put the annotation on"
									+ " the controller's handler method (a functional route adds the"
									+ " IdempotencyHandlerFilterFunction bean instead).",
							null);
				}
				if (!annotation.fingerprint().isEmpty()) {
					throw new InvalidIdempotentMethodException(beanName, where,
							"fingerprint = \"" + annotation.fingerprint() + "\" without key: the HTTP door protects"
									+ " this method with the Idempotency-Key header and fingerprints the request",
							"Remove fingerprint, or add key = \"<SpEL over the arguments>\" for the method door.",
							null);
				}
				return;
			}
			String unreachable = unreachable(method, AnnotatedElementUtils.hasAnnotation(method, Idempotent.class),
					targetClass);
			if (unreachable != null) {
				throw new InvalidIdempotentMethodException(beanName, where,
						"@Idempotent(key = ...) on a " + unreachable + " method: the method door is a proxy around"
								+ " the bean, which never sees a call of it, so every call would run unprotected",
						"Make the method public and not final (or static), and call it on the bean from another bean:"
								+ " a call from inside the bean (this.method()) does not go through the proxy either.",
						null);
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
			if (reactive == IdempotentOperation.Returns.VALUE && isReadOnce(method.getReturnType())) {
				throw new InvalidIdempotentMethodException(beanName, where,
						returns + ", which is read once: the door would store what it read, and the caller would"
								+ " get nothing",
						"Return the values themselves (a List, a byte[], a String), or a Flux of them.", null);
			}
			// A Flux's result is the list of its elements: each is checked as an element.
			String inside = unreplayableInside(reactive.resultType(method, targetClass),
					reactive != IdempotentOperation.Returns.FLUX, 0);
			if (inside != null) {
				throw new InvalidIdempotentMethodException(beanName, where, returns + inside,
						"Declare a concrete class for what the result holds (a record, a class, String, Long,"
								+ " BigDecimal), or a type Jackson reads polymorphically (@JsonTypeInfo).",
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
				|| Flow.Publisher.class.isAssignableFrom(returnType)
				|| ASYNCHRONOUS_TYPE_NAMES.stream().anyMatch((name) -> isAssignable(name, returnType));
	}

	/** A stream, an iterator or an input: what the caller reads once. */
	private static boolean isReadOnce(Class<?> type) {
		return BaseStream.class.isAssignableFrom(type) || Iterator.class.isAssignableFrom(type)
				|| Spliterator.class.isAssignableFrom(type) || InputStream.class.isAssignableFrom(type)
				|| Reader.class.isAssignableFrom(type);
	}

	/**
	 * Why a proxy never sees a call of the method, {@code null} if it does: a private, a
	 * static or a final method. Of the methods the annotation on the class covers, only a
	 * final one the class declares itself is refused (a private or static one is not
	 * called through the bean, and a superclass's final method is not the class's
	 * operation).
	 */
	private static @Nullable String unreachable(Method method, boolean annotatedItself, Class<?> targetClass) {
		if (!annotatedItself && method.getDeclaringClass() != targetClass) {
			return null;
		}
		int modifiers = method.getModifiers();
		if (Modifier.isStatic(modifiers)) {
			return annotatedItself ? "static" : null;
		}
		if (Modifier.isPrivate(modifiers)) {
			return annotatedItself ? "private" : null;
		}
		return Modifier.isFinal(modifiers) ? "final" : null;
	}

	/**
	 * Why what a result holds cannot be replayed as it was, {@code null} if it can: a
	 * publisher, a future or a stream inside it, or a collection, map, array or
	 * {@code Optional} of elements declared as an interface or an abstract class (a
	 * {@code Flux} of them, too), which JSON does not say how to read back (but Jackson's
	 * own, such as {@code JsonNode}, which it reads). A result declared as such a type
	 * itself is stored with its class, and {@code Object} elements are checked as each
	 * result is stored (the values read back must be of the classes written).
	 * @param top whether {@code type} is the result itself
	 * @param depth how deep inside the result {@code type} is
	 */
	private static @Nullable String unreplayableInside(ResolvableType type, boolean top, int depth) {
		Class<?> raw = type.resolve(Object.class);
		if (depth > 8) {
			return null;
		}
		// A method's own return type was checked before: this is a Mono's value, or a
		// type inside the result.
		if (isAsynchronous(raw) || isReadOnce(raw)
				|| IdempotentOperation.Returns.of(raw) != IdempotentOperation.Returns.VALUE) {
			return ", which holds a " + raw.getName() + ": a result that comes, or is read, after the call"
					+ " is not stored";
		}
		if (raw.isArray()) {
			return unreplayableInside(type.getComponentType(), false, depth + 1);
		}
		if (Collection.class.isAssignableFrom(raw) || Optional.class == raw) {
			return unreplayableInside(
					type.as((raw == Optional.class) ? Optional.class : Collection.class).getGeneric(0), false,
					depth + 1);
		}
		if (Map.class.isAssignableFrom(raw)) {
			return unreplayableInside(type.as(Map.class).getGeneric(1), false, depth + 1);
		}
		if (top || raw == Object.class || raw.isPrimitive() || raw == CharSequence.class || raw.isEnum()
				|| (raw.getName().startsWith("java.") && raw != Number.class && !raw.isInterface())
				|| raw == java.nio.file.Path.class || raw.getName().startsWith("tools.jackson.")
				|| raw.getName().startsWith("com.fasterxml.jackson.")
				|| (!raw.isInterface() && !Modifier.isAbstract(raw.getModifiers()))
				|| MergedAnnotations.from(raw, MergedAnnotations.SearchStrategy.TYPE_HIERARCHY)
					.isPresent(JSON_TYPE_INFO)) {
			return null;
		}
		return ", whose elements are declared " + raw.getName() + ", an interface or an abstract class: JSON does"
				+ " not say which class each was, so a replay could not read them back (nor give a Long for a Long"
				+ " declared Number)";
	}

	private static boolean isAssignable(String typeName, Class<?> returnType) {
		ClassLoader classLoader = returnType.getClassLoader();
		if (!ClassUtils.isPresent(typeName, classLoader)) {
			return false;
		}
		return ClassUtils.resolveClassName(typeName, classLoader).isAssignableFrom(returnType);
	}

}
