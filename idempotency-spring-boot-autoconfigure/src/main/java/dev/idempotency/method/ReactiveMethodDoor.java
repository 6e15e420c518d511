package dev.idempotency.method;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.Supplier;

import dev.idempotency.IdempotencyRejectedException;
import dev.idempotency.IdempotencyRequestAttributes;
import dev.idempotency.autoconfigure.internal.EngineSteps;
import dev.idempotency.core.IdempotencyErrorType;
import dev.idempotency.core.internal.Answer;
import dev.idempotency.core.internal.Decision;
import dev.idempotency.core.internal.IdempotencyEngine;
import dev.idempotency.core.internal.IdempotentCall;
import dev.idempotency.core.internal.Reservation;
import dev.idempotency.store.StoredResponse;
import io.micrometer.observation.Observation;
import io.micrometer.observation.contextpropagation.ObservationThreadLocalAccessor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.util.context.ContextView;
import tools.jackson.databind.ObjectMapper;

import org.springframework.aop.ProxyMethodInvocation;
import org.springframework.web.filter.reactive.ServerWebExchangeContextFilter;
import org.springframework.web.server.ServerWebExchange;

/**
 * The method door for a method that returns a Reactor {@code Mono} or {@code Flux}: the
 * call is protected when the returned publisher is <em>subscribed</em>, not when the
 * method is called. A {@code Mono} describes work that runs once per subscription; the
 * door protects that work. Begun at the call instead, a caller that never subscribes
 * would hold the key until its lease ran out, and one that subscribes twice would run the
 * work twice under one reservation. Begun per subscription, a second subscription (a
 * {@code retry()}, a {@code repeat()}, a cached call subscribed again) is one more call
 * with the same key: it is replayed, or told in flight, as a second call of a blocking
 * method would be. The method itself is invoked (its {@code Mono} assembled) only when
 * the engine says to run it, once per such subscription.
 * <p>
 * A {@code Mono}'s value is recorded when it completes, then emitted; an empty
 * {@code Mono} is recorded as no value and replayed empty. A {@code Flux}'s elements are
 * passed on as they come, and collected (as a list, in the door's JSON) while their
 * encoded size stays within {@code idempotency.response.max-body-size}; when it
 * completes, they are recorded before the completion is passed on. A {@code Flux} over
 * the bound is not recorded and its key is released (its elements were all delivered,
 * never truncated); a retry runs it again. A replay emits the stored value or elements.
 * <p>
 * An error releases the key and is passed on; a cancel before the publisher completed
 * (the subscriber went away, a {@code timeout()}) leaves the record to its lease, as the
 * WebFlux door does for a client that went away: the work may still be running, so a
 * retry is told in flight until the lease has run out, then takes it over. A refusal
 * ({@code 422 key-reused}, {@code request-in-flight} after {@code in-flight.wait}, ...)
 * is the {@link IdempotencyRejectedException} of the blocking door, as the publisher's
 * error. The wait for a call in flight holds no thread.
 * <p>
 * The engine's steps that call a blocking store run on Reactor's bounded elastic
 * scheduler (the one the WebFlux door uses), never on the subscriber's thread, which may
 * be an event loop. The scope is the one of the web request the method was called in;
 * inside a WebFlux request, the exchange's, when Spring's
 * {@link ServerWebExchangeContextFilter} puts the exchange in the Reactor context, else
 * {@code anonymous}.
 */
final class ReactiveMethodDoor {

	private final IdempotencyEngine engine;

	private final MethodResultCodec results;

	private final ObjectMapper objectMapper;

	private final String problemTypeBase;

	private final Function<ServerWebExchange, Mono<String>> exchangeScope;

	private final Scheduler storeScheduler;

	private final Executor storeExecutor;

	/**
	 * @param exchangeScope the scope of a WebFlux exchange, for a call subscribed inside
	 * a WebFlux request
	 */
	ReactiveMethodDoor(IdempotencyEngine engine, MethodResultCodec results, ObjectMapper objectMapper,
			String problemTypeBase, Function<ServerWebExchange, Mono<String>> exchangeScope) {
		this.engine = engine;
		this.results = results;
		this.objectMapper = objectMapper;
		this.problemTypeBase = problemTypeBase;
		this.exchangeScope = exchangeScope;
		this.storeScheduler = Schedulers.boundedElastic();
		this.storeExecutor = this.storeScheduler::schedule;
	}

	/**
	 * The protected publisher for a call of a method returning a {@code Mono} or a
	 * {@code Flux}: nothing happens until it is subscribed.
	 * @param callerScope the scope of the web request the method was called in, used
	 * unless the subscription comes with a WebFlux exchange
	 * @param call the engine's call in a scope
	 */
	Publisher<?> protect(IdempotentOperation operation, MethodInvocation invocation, String callerScope,
			@Nullable Object keyValue, Function<String, IdempotentCall> call) {
		if (operation.returns() == IdempotentOperation.Returns.FLUX) {
			return decision(callerScope, call).flatMapMany((decision) -> {
				if (decision instanceof Decision.Replay replay) {
					List<?> stored = (List<?>) this.results.replay(operation, keyValue, replay.response());
					return (stored != null) ? Flux.fromIterable(stored) : Flux.empty();
				}
				if (decision instanceof Decision.Reject reject) {
					return Mono.deferContextual((context) -> refused(context, operation, reject));
				}
				Reservation reservation = ((Decision.Proceed) decision).reservation();
				return (reservation != null) ? flux(operation, invocation, reservation)
						: Flux.from(proceed(invocation, null));
			});
		}
		return decision(callerScope, call).flatMap((decision) -> {
			if (decision instanceof Decision.Replay replay) {
				return Mono.justOrEmpty(this.results.replay(operation, keyValue, replay.response()));
			}
			if (decision instanceof Decision.Reject reject) {
				return Mono.deferContextual((context) -> refused(context, operation, reject));
			}
			Reservation reservation = ((Decision.Proceed) decision).reservation();
			return (reservation != null) ? mono(operation, invocation, reservation)
					: Mono.from(proceed(invocation, null));
		});
	}

	/**
	 * A publisher of the method's kind that fails with {@code failure} when subscribed:
	 * what the call failed with before it was made (its key expression, say).
	 */
	static Publisher<?> failed(IdempotentOperation operation, Throwable failure) {
		return (operation.returns() == IdempotentOperation.Returns.FLUX) ? Flux.error(failure) : Mono.error(failure);
	}

	/**
	 * The engine's decision, made when subscribed; if the subscriber cancels while it is
	 * being made, a key reserved for it is released (nothing ran).
	 */
	private Mono<Decision> decision(String callerScope, Function<String, IdempotentCall> call) {
		return Mono.deferContextual((context) -> scope(context, callerScope).flatMap((scope) -> {
			CompletableFuture<Decision> decided;
			// The subscriber's observation (a WebFlux request's, in the Reactor context)
			// is current while the engine starts the call's: its parent, so that the
			// call is in the request's trace.
			Observation parent = context.getOrDefault(ObservationThreadLocalAccessor.KEY, null);
			try (Observation.Scope opened = (parent != null) ? parent.openScope() : null) {
				decided = this.engine.beginAsync(call.apply(scope), false, this.storeExecutor);
			}
			return EngineSteps.decision(decided, EngineSteps.NON_BLOCKING, (reservation) -> finishing(() -> this.engine
				.failedAsync(reservation, "its subscriber cancelled before it ran", this.storeExecutor)));
		}));
	}

	/**
	 * The scope of a WebFlux exchange in the subscriber's context, else the scope of the
	 * web request the method was called in.
	 */
	private Mono<String> scope(ContextView context, String callerScope) {
		ServerWebExchange exchange = ServerWebExchangeContextFilter.getExchange(context).orElse(null);
		return (exchange != null) ? this.exchangeScope.apply(exchange) : Mono.just(callerScope);
	}

	private <T> Mono<T> refused(ContextView context, IdempotentOperation operation, Decision.Reject reject) {
		if (reject.error().type() == IdempotencyErrorType.REQUEST_IN_FLIGHT) {
			// As the blocking door: what the request answers now depends on a call still
			// running, so it is not stored under the request's own key.
			ServerWebExchangeContextFilter.getExchange(context)
				.ifPresent((exchange) -> exchange.getAttributes()
					.put(IdempotencyRequestAttributes.NOT_STORED_REASON,
							"a call it made (" + operation.name() + ") was still in flight"));
		}
		return Mono.error(new IdempotencyRejectedException(reject.error(), this.problemTypeBase));
	}

	/** Runs a {@code Mono} that holds the key: records its value, then emits it. */
	private Mono<Object> mono(IdempotentOperation operation, MethodInvocation invocation, Reservation reservation) {
		AtomicBoolean completed = new AtomicBoolean();
		return Mono.from(proceed(invocation, reservation))
			.contextWrite((context) -> withObservation(context, reservation))
			.<Optional<Object>>map(Optional::of)
			.defaultIfEmpty(Optional.empty())
			.doOnNext((value) -> completed.set(true))
			.onErrorResume((ex) -> released(reservation, ex))
			.flatMap((value) -> record(operation, reservation, value.orElse(null)))
			.doOnCancel(() -> abandonUnless(completed, reservation));
	}

	/**
	 * Runs a {@code Flux} that holds the key: passes its elements on, collects them
	 * within the answer bound, records them when it completes, then completes.
	 */
	private Flux<Object> flux(IdempotentOperation operation, MethodInvocation invocation, Reservation reservation) {
		Collected collected = new Collected(this.objectMapper, this.engine.settings().maxBodyBytes());
		AtomicBoolean completed = new AtomicBoolean();
		return Flux.<Object>from(proceed(invocation, reservation))
			.contextWrite((context) -> withObservation(context, reservation))
			.doOnNext(collected::add)
			.doOnComplete(() -> completed.set(true))
			.onErrorResume((ex) -> released(reservation, ex))
			.concatWith(Mono.defer(() -> recordAll(operation, reservation, collected)))
			.doOnCancel(() -> abandonUnless(completed, reservation));
	}

	/**
	 * The method's publisher, the method invoked now (through a copy of the invocation,
	 * so that each subscription runs the advice after this door again), its call's
	 * observation current while it is assembled. A method that throws or returns
	 * {@code null} gives an error.
	 */
	private Publisher<?> proceed(MethodInvocation invocation, @Nullable Reservation reservation) {
		MethodInvocation copy = (invocation instanceof ProxyMethodInvocation proxy) ? proxy.invocableClone()
				: invocation;
		Object publisher;
		try (Observation.Scope scope = (reservation != null) ? this.engine.openScope(reservation) : null) {
			publisher = copy.proceed();
		}
		catch (Throwable ex) {
			return Mono.error(ex);
		}
		if (publisher == null) {
			return Mono.error(new IllegalStateException(invocation.getMethod().toGenericString()
					+ " returned null instead of a " + invocation.getMethod().getReturnType().getSimpleName()));
		}
		return (Publisher<?>) publisher;
	}

	/** The call's observation for what the method observes, as its children. */
	private reactor.util.context.Context withObservation(reactor.util.context.Context context,
			Reservation reservation) {
		Observation observation = this.engine.observation(reservation);
		return (observation != null) ? context.put(ObservationThreadLocalAccessor.KEY, observation) : context;
	}

	/** The method's publisher failed: the key is released, then the error passed on. */
	private <T> Mono<T> released(Reservation reservation, Throwable error) {
		return finishing(
				() -> this.engine.failedAsync(reservation, "its publisher failed: " + error, error, this.storeExecutor))
			.then(Mono.error(error));
	}

	/**
	 * Cancelled before the method's publisher completed: it may still be running, so the
	 * record is left to its lease (a retry is told in flight, then takes over).
	 */
	private void abandonUnless(AtomicBoolean completed, Reservation reservation) {
		if (!completed.get()) {
			// Calls no store.
			this.engine.abandoned(reservation, "its subscriber cancelled while it ran");
		}
	}

	/**
	 * Records a {@code Mono}'s value ({@code null} for none) and gives the value to emit:
	 * its own, or in record-after-success mode the one another call recorded first.
	 */
	private Mono<Object> record(IdempotentOperation operation, Reservation reservation, @Nullable Object value) {
		StoredResponse stored;
		try {
			stored = this.results.write(operation, value);
		}
		catch (RuntimeException ex) {
			return unreplayable(operation, reservation, ex);
		}
		return finishing(() -> this.engine.succeededAsync(reservation, stored, this.storeExecutor))
			.flatMap((answer) -> Mono.justOrEmpty((answer instanceof Answer.Recorded recorded)
					? this.results.read(operation, recorded.response()) : value));
	}

	/**
	 * Records a {@code Flux}'s elements, or releases the key if they were over the bound.
	 * In record-after-success mode a call whose recording lost to another's has given its
	 * own elements already; retries get those recorded first.
	 */
	private Mono<Object> recordAll(IdempotentOperation operation, Reservation reservation, Collected collected) {
		List<Object> values = collected.values();
		if (values == null) {
			return finishing(
					() -> this.engine.responseTooLargeAsync(reservation, collected.bytes(), this.storeExecutor))
				.then(Mono.empty());
		}
		StoredResponse stored;
		try {
			stored = this.results.write(operation, values);
		}
		catch (RuntimeException ex) {
			return unreplayable(operation, reservation, ex);
		}
		return finishing(() -> this.engine.succeededAsync(reservation, stored, this.storeExecutor)).then(Mono.empty());
	}

	private <T> Mono<T> unreplayable(IdempotentOperation operation, Reservation reservation, RuntimeException ex) {
		return finishing(() -> this.engine.failedAsync(reservation, "the result cannot be replayed: " + ex.getMessage(),
				this.storeExecutor))
			.then(Mono.error(IdempotentMethodInterceptor.unreplayable(operation, ex)));
	}

	/**
	 * A finishing step of the engine ({@code succeededAsync}, {@code failedAsync}, ...):
	 * a non-blocking store is called on this thread, a blocking store's call alone on the
	 * bounded scheduler, never on the subscriber's thread. It runs now, whether or not
	 * the result is subscribed, and is not cancelled with it: a record once begun is
	 * finished. A step that ends on a store's thread goes on on Reactor's non-blocking
	 * threads ({@link EngineSteps#NON_BLOCKING}).
	 */
	private <T> Mono<T> finishing(Supplier<CompletableFuture<T>> step) {
		CompletableFuture<T> done;
		try {
			done = step.get();
		}
		catch (RuntimeException ex) {
			done = CompletableFuture.failedFuture(ex);
		}
		return EngineSteps.ended(done, EngineSteps.NON_BLOCKING);
	}

	/**
	 * A {@code Flux}'s elements so far, while their JSON fits the answer bound; the
	 * Reactive Streams rules make its calls sequential.
	 */
	private static final class Collected {

		private final ObjectMapper objectMapper;

		private final long maxBytes;

		private @Nullable List<Object> values = new ArrayList<>();

		/** The JSON array's size so far: brackets, elements and commas. */
		private long bytes = 2;

		Collected(ObjectMapper objectMapper, long maxBytes) {
			this.objectMapper = objectMapper;
			this.maxBytes = maxBytes;
		}

		void add(Object value) {
			List<Object> values = this.values;
			if (values == null) {
				return;
			}
			try {
				this.bytes += this.objectMapper.writeValueAsBytes(value).length + (values.isEmpty() ? 0 : 1);
			}
			catch (RuntimeException ex) {
				// Kept: writing the whole list fails the same way, and says so.
			}
			if (this.bytes > this.maxBytes) {
				// Over the bound: never stored, so never held.
				this.values = null;
				return;
			}
			values.add(value);
		}

		/** The elements, {@code null} if they were over the bound. */
		@Nullable List<Object> values() {
			return this.values;
		}

		/**
		 * The elements' size in JSON, as far as counted (past the bound when over it).
		 */
		long bytes() {
			return this.bytes;
		}

	}

}
