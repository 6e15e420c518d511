package dev.idempotency.method;

import java.util.List;
import java.util.function.Supplier;

import dev.idempotency.IdempotencyRejectedException;
import dev.idempotency.Idempotent;
import dev.idempotency.core.IdempotencyErrorType;
import dev.idempotency.core.IdempotencyListener;
import dev.idempotency.core.IdempotencyOutcome;
import dev.idempotency.core.internal.Answer;
import dev.idempotency.core.internal.Decision;
import dev.idempotency.core.internal.Fingerprints;
import dev.idempotency.core.internal.IdempotencyEngine;
import dev.idempotency.core.internal.Reservation;
import dev.idempotency.store.StoredResponse;
import dev.idempotency.web.ServerIdempotencyScopeResolver;
import dev.idempotency.web.ServerPrincipalScopeResolver;
import io.micrometer.observation.Observation;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.support.AopUtils;
import tools.jackson.databind.ObjectMapper;

/**
 * The method front door: {@link Idempotent @Idempotent} on any Spring bean method. The
 * key comes from the annotation's SpEL expression over the arguments; the fingerprint
 * covers the method and its arguments (or the value of the annotation's fingerprint
 * expression) in a canonical form of the door's own ({@link CanonicalArguments}), not in
 * the application's JSON; the return value is stored as JSON and replayed as the method's
 * declared (generic) return type, or as the result's own class when the declared type is
 * {@code Object}, an interface or an abstract class. A result is stored only once it has
 * been read back as a value of the declared type; otherwise the key is released and the
 * call fails with an {@link IllegalStateException}, so a retry never finds an answer it
 * cannot replay. A method returning a Reactor {@code Mono} or {@code Flux} is protected
 * when the returned publisher is subscribed, by the {@link ReactiveMethodDoor}. Handler
 * methods that the HTTP door protects (those without a key expression) are left to it.
 * <p>
 * Applied by the {@link IdempotentMethodPostProcessor} to beans with {@code @Idempotent}
 * on a method or on the class (then to each of its methods). It runs the call through the
 * engine; the {@link IdempotentOperationSource} reads the annotation, the
 * {@link MethodResultCodec} stores and reads results, {@link MethodTransactions} follows
 * the caller's transaction and {@link WebRequestContext} the HTTP door.
 */
class IdempotentMethodInterceptor implements MethodInterceptor {

	private static final Log logger = LogFactory.getLog(IdempotentMethodInterceptor.class);

	private final IdempotencyEngine engine;

	private final Supplier<String> scopeSupplier;

	private final String problemTypeBase;

	private final IdempotencyListener listener;

	private final IdempotentOperationSource operations = new IdempotentOperationSource();

	private final MethodResultCodec results;

	private final MethodTransactions transactions;

	private final ObjectMapper objectMapper;

	/**
	 * The application's {@code ServerIdempotencyScopeResolver}, {@code null} for none (an
	 * {@code Object}, so that nothing of WebFlux is loaded without it).
	 */
	private final Supplier<? extends @Nullable Object> exchangeScopeResolver;

	/**
	 * The door for methods returning a {@code Mono} or a {@code Flux}, made at first use.
	 */
	private volatile @Nullable ReactiveMethodDoor reactive;

	/**
	 * @param engine the protocol
	 * @param objectMapper writes results and reads them back
	 * @param scopeSupplier whom a key belongs to, for the current call
	 * @param problemTypeBase the base of the problem {@code type} URIs of an
	 * {@link IdempotencyRejectedException}
	 * @param listener told of calls whose key expression yields {@code null} (the
	 * engine's own listener, told of every other outcome)
	 */
	public IdempotentMethodInterceptor(IdempotencyEngine engine, ObjectMapper objectMapper,
			Supplier<String> scopeSupplier, String problemTypeBase, IdempotencyListener listener) {
		this(engine, objectMapper, scopeSupplier, problemTypeBase, listener, List.of());
	}

	/**
	 * @param engine the protocol
	 * @param objectMapper writes results and reads them back
	 * @param scopeSupplier whom a key belongs to, for the current call
	 * @param problemTypeBase the base of the problem {@code type} URIs of an
	 * {@link IdempotencyRejectedException}
	 * @param listener told of calls whose key expression yields {@code null} (the
	 * engine's own listener, told of every other outcome)
	 * @param allowedResultTypes classes and packages (with their sub-packages) that a
	 * stored result may name as its class, besides the packages of the bean and of its
	 * declared return type, and JDK values
	 */
	public IdempotentMethodInterceptor(IdempotencyEngine engine, ObjectMapper objectMapper,
			Supplier<String> scopeSupplier, String problemTypeBase, IdempotencyListener listener,
			List<String> allowedResultTypes) {
		this(engine, objectMapper, scopeSupplier, problemTypeBase, listener, allowedResultTypes, () -> null);
	}

	/**
	 * @param engine the protocol
	 * @param objectMapper writes results and reads them back
	 * @param scopeSupplier whom a key belongs to, for the current call
	 * @param problemTypeBase the base of the problem {@code type} URIs of an
	 * {@link IdempotencyRejectedException}
	 * @param listener told of calls whose key expression yields {@code null} (the
	 * engine's own listener, told of every other outcome)
	 * @param allowedResultTypes classes and packages (with their sub-packages) that a
	 * stored result may name as its class, besides the packages of the bean and of its
	 * declared return type, and JDK values
	 * @param exchangeScopeResolver the application's
	 * {@code dev.idempotency.web.ServerIdempotencyScopeResolver}, or {@code null}: the
	 * scope of a {@code Mono} or {@code Flux} subscribed inside a WebFlux request whose
	 * exchange is in the Reactor context
	 */
	public IdempotentMethodInterceptor(IdempotencyEngine engine, ObjectMapper objectMapper,
			Supplier<String> scopeSupplier, String problemTypeBase, IdempotencyListener listener,
			List<String> allowedResultTypes, Supplier<? extends @Nullable Object> exchangeScopeResolver) {
		this.engine = engine;
		this.objectMapper = objectMapper;
		this.exchangeScopeResolver = exchangeScopeResolver;
		this.scopeSupplier = scopeSupplier;
		this.problemTypeBase = problemTypeBase;
		this.listener = listener;
		this.results = new MethodResultCodec(objectMapper, allowedResultTypes);
		this.transactions = new MethodTransactions(engine);
	}

	@Override
	public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
		Object target = invocation.getThis();
		Class<?> targetClass = (target != null) ? AopUtils.getTargetClass(target)
				: invocation.getMethod().getDeclaringClass();
		IdempotentOperation operation = this.operations.find(invocation.getMethod(), targetClass);
		if (operation == null) {
			return invocation.proceed();
		}
		if (!operation.hasKey()) {
			// No key expression: a controller's handler method, which the HTTP door
			// protects with the header, on Spring MVC as on WebFlux (a controller is
			// proxied when another of its methods has a key; the start-up refuses a
			// keyless annotation elsewhere).
			return invocation.proceed();
		}
		WebRequestContext web = WebRequestContext.current();
		@Nullable Object[] args = invocation.getArguments();
		Object keyValue;
		try {
			keyValue = operation.keyValue(target, args);
		}
		catch (RuntimeException ex) {
			// A Mono or a Flux says its failure as its error, as the call would.
			if (operation.returns() != IdempotentOperation.Returns.VALUE) {
				return ReactiveMethodDoor.failed(operation, ex);
			}
			throw ex;
		}
		if (keyValue == null && !operation.keyRequired()) {
			// Most likely a bug in the caller or the expression: say so, and count it.
			logger.warn("The key expression " + operation.keyExpression() + " of " + operation.name()
					+ " yielded null: running it unprotected (keyRequired = true refuses such calls)");
			this.listener.onOutcome(IdempotencyOutcome.NULL_KEY, operation.name());
			return invocation.proceed();
		}
		if (operation.returns() != IdempotentOperation.Returns.VALUE) {
			// A Mono or a Flux: protected when subscribed. The caller's scope is read
			// now,
			// on the caller's thread.
			return reactive().protect(operation, invocation, this.scopeSupplier.get(), keyValue,
					(scope) -> operation.call(scope, keyValue, () -> fingerprint(operation, target, args)));
		}
		Decision decision = this.engine
			.begin(operation.call(this.scopeSupplier.get(), keyValue, () -> fingerprint(operation, target, args)));
		if (decision instanceof Decision.Replay replay) {
			return this.results.replay(operation, keyValue, replay.response());
		}
		if (decision instanceof Decision.Reject reject) {
			if (web != null && reject.error().type() == IdempotencyErrorType.REQUEST_IN_FLIGHT) {
				// Whatever the request answers now depends on a call still running: never
				// store it under the request's own key, or its retries would replay "in
				// flight" for good.
				web.doNotStoreResponse("a call it made (" + operation.name() + ") was still in flight");
			}
			throw new IdempotencyRejectedException(reject.error(), this.problemTypeBase);
		}
		Reservation reservation = ((Decision.Proceed) decision).reservation();
		if (reservation == null) {
			return invocation.proceed();
		}
		Object result;
		try (Observation.Scope scope = this.engine.openScope(reservation)) {
			result = invocation.proceed();
		}
		catch (Throwable ex) {
			this.engine.failed(reservation, "the method threw " + ex.getClass().getName(), ex);
			throw ex;
		}
		StoredResponse stored;
		try {
			stored = this.results.write(operation, result);
		}
		catch (RuntimeException ex) {
			// Never store an answer that a retry could not read back: release the key
			// instead.
			this.engine.failed(reservation, "the result cannot be replayed: " + ex.getMessage());
			throw unreplayable(operation, ex);
		}
		if (this.transactions.completeAfterCommit(reservation, stored, operation.name())) {
			return result;
		}
		if (!(this.engine.succeeded(reservation, stored) instanceof Answer.Recorded recorded)) {
			return result;
		}
		// Record-after-success: another call of the same request ran beside this one and
		// recorded its result first. Its effects are the ones that count: this call's own
		// writes in the caller's transaction must not commit, and it answers as that call
		// did.
		this.transactions.markRollbackOnly(operation.name());
		return this.results.read(operation, recorded.response());
	}

	/** The error of a call whose result cannot be read back, so was not stored. */
	static IllegalStateException unreplayable(IdempotentOperation operation, RuntimeException ex) {
		return new IllegalStateException("The result of " + operation.method().toGenericString()
				+ " cannot be replayed from JSON, so it is not stored and its key is released: " + ex.getMessage(), ex);
	}

	private ReactiveMethodDoor reactive() {
		ReactiveMethodDoor reactive = this.reactive;
		if (reactive == null) {
			// Only a method returning a Mono or a Flux gets here: Reactor is present.
			ServerIdempotencyScopeResolver resolver = (this.exchangeScopeResolver
				.get() instanceof ServerIdempotencyScopeResolver own) ? own : new ServerPrincipalScopeResolver();
			reactive = new ReactiveMethodDoor(this.engine, this.results, this.objectMapper, this.problemTypeBase,
					resolver::resolveScope);
			this.reactive = reactive;
		}
		return reactive;
	}

	/**
	 * The method and what identifies the call: its arguments, or the value of its
	 * fingerprint expression, in the door's canonical form. A value the door cannot read
	 * (behind a type the declaration left open) refuses the call before anything is
	 * reserved or run: a fingerprint over less would replay another call's result.
	 */
	private String fingerprint(IdempotentOperation operation, @Nullable Object target, @Nullable Object[] args) {
		byte[] call;
		try {
			call = operation.canonicalCall(target, args);
		}
		catch (CanonicalArguments.UnreadableValueException ex) {
			throw new IllegalStateException("@Idempotent on " + operation.method().toGenericString()
					+ " cannot compare this call with others, so it does not run: " + ex.getMessage()
					+ ". Name what identifies a call with @Idempotent(fingerprint = \"...\"), a SpEL expression"
					+ " over the arguments whose value the door reads instead", ex);
		}
		return Fingerprints.method(operation.identity(), call);
	}

}
