package dev.idempotency.web;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

import dev.idempotency.IdempotencyRequestAttributes;
import dev.idempotency.autoconfigure.internal.EngineSteps;
import dev.idempotency.core.IdempotencyError;
import dev.idempotency.core.IdempotencyErrorType;
import dev.idempotency.core.KeyFormat;
import dev.idempotency.core.internal.Answer;
import dev.idempotency.core.internal.AtomicOutcome;
import dev.idempotency.core.internal.Decision;
import dev.idempotency.core.internal.Fingerprints;
import dev.idempotency.core.internal.IdempotencyEngine;
import dev.idempotency.core.internal.IdempotentCall;
import dev.idempotency.core.internal.Reservation;
import dev.idempotency.store.StoredResponse;
import io.micrometer.observation.Observation;
import io.micrometer.observation.contextpropagation.ObservationThreadLocalAccessor;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Subscription;
import reactor.core.CoreSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Operators;
import reactor.util.context.Context;
import reactor.core.scheduler.Scheduler;

import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferFactory;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.util.MultiValueMap;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilterChain;

/**
 * The WebFlux door itself, shared by its two entrances: {@link IdempotencyWebFilter}
 * (annotated handlers, {@code idempotency.web.path-patterns}) and
 * {@link IdempotencyHandlerFilterFunction} (a functional route). For a protected mutation
 * it checks the key, reads the body (bounded: {@code 413} past
 * {@code idempotency.request.max-body-size}), asks the engine, without blocking, whether
 * to run, replay or refuse, and holds the handler's answer until it is stored. Every
 * store call of a run, from its first look to its end, goes through the engine's
 * non-blocking steps: a blocking store's call alone runs on a bounded scheduler, never on
 * the event loop, a non-blocking store's without a thread hop; a wait for a run in flight
 * holds no thread.
 * <p>
 * A client that goes away while its handler runs cancels it: the record is abandoned to
 * its lease (a retry is answered in flight, then takes over), never released while the
 * operation may still be running. A handler that fails releases the key. One request is
 * protected once: the first entrance to reach it protects it, the other lets it through.
 */
final class WebFluxDoor implements SmartInitializingSingleton {

	/**
	 * The exchange attribute that marks a request as protected (its operation), so that a
	 * route both under a path pattern and filtered is protected once.
	 */
	static final String PROTECTED_ATTRIBUTE = WebFluxDoor.class.getName() + ".PROTECTED";

	/**
	 * The Reactor context key of where a protected request goes on once a step of the
	 * engine ended on another thread ({@link EngineSteps#goingOnFor}).
	 */
	private static final String GOING_ON = WebFluxDoor.class.getName() + ".GOING_ON";

	/**
	 * The context a body is read in: a buffer the server drops (a read cancelled past the
	 * limit) is released.
	 */
	private static final Context RELEASE_DISCARDED = Operators.enableOnDiscard(Context.empty(), (discarded) -> {
		if (discarded instanceof DataBuffer buffer) {
			DataBufferUtils.release(buffer);
		}
	});

	private final IdempotencyEngine engine;

	private final ServerIdempotencyScopeResolver scopeResolver;

	private final ServerRefusals refusals;

	private final WebDoorSettings settings;

	private final Executor storeExecutor;

	private @Nullable ReactiveHandlerTransactions transactions;

	WebFluxDoor(IdempotencyEngine engine, ServerIdempotencyScopeResolver scopeResolver, ServerRefusals refusals,
			WebDoorSettings settings, Scheduler storeScheduler) {
		this.engine = engine;
		this.scopeResolver = scopeResolver;
		this.refusals = refusals;
		this.settings = settings;
		this.storeExecutor = storeScheduler::schedule;
	}

	/**
	 * How refusals are written: also for the method door's, once they leave a handler.
	 */
	ServerRefusals refusals() {
		return this.refusals;
	}

	/**
	 * The application's message writers, looked up before any request (not on an event
	 * loop).
	 */
	@Override
	public void afterSingletonsInstantiated() {
		this.refusals.resolveWriters();
	}

	/**
	 * Whether the door protects this request already: a functional route's filter then
	 * lets it through, so that a route under a path pattern and filtered is protected
	 * once.
	 */
	static boolean isProtected(ServerWebExchange exchange) {
		return exchange.getAttribute(PROTECTED_ATTRIBUTE) != null;
	}

	WebDoorSettings settings() {
		return this.settings;
	}

	/**
	 * Protects one request: checks its key, reads its body (bounded), asks the engine,
	 * and runs {@code chain} (the handler, which writes its answer to the exchange it is
	 * given) with its answer held until stored, or answers a replay or a refusal itself;
	 * marks the request {@link #isProtected protected}.
	 * @param exchange the request (a mutation)
	 * @param handler what protects it
	 * @param chain the handler to run, writing its answer to the exchange it is given
	 * @return when the answer is written
	 */
	Mono<Void> protect(ServerWebExchange exchange, Protection handler, WebFilterChain chain) {
		exchange.getAttributes().put(PROTECTED_ATTRIBUTE, handler.operation());
		List<String> keys = exchange.getRequest().getHeaders().getOrEmpty(this.settings.headerName());
		// Without a key, the engine says at once whether the request runs unprotected or
		// is refused: no scope is needed.
		Mono<String> scope = keys.isEmpty() ? Mono.just(PrincipalScopeResolver.ANONYMOUS)
				: this.scopeResolver.resolveScope(exchange).defaultIfEmpty(PrincipalScopeResolver.ANONYMOUS);
		return scope.flatMap((resolved) -> {
			ReadBody read = new ReadBody();
			IdempotentCall call = new IdempotentCall(resolved, keys, handler.keyFormat(), handler.keyRequired(),
					handler.operation(), () -> read.fingerprint().fingerprint(),
					() -> read.fingerprint().earlierFingerprints());
			// The body is read only once the key was found valid, when the store is to be
			// asked.
			Supplier<CompletableFuture<?>> reading = () -> body(exchange, read);
			Executor goingOn = EngineSteps.goingOnFor(exchange.getRequest());
			return decision(call, reading, goingOn).flatMap((decision) -> {
				if (decision instanceof Decision.Replay replay) {
					return writeStored(exchange.getResponse(), replay.response());
				}
				if (decision instanceof Decision.Reject reject) {
					return this.refusals.refuse(exchange, reject.error());
				}
				Reservation reservation = ((Decision.Proceed) decision).reservation();
				return (reservation != null) ? run(exchange, read.request(exchange), chain, reservation)
						: chain.filter(read.exchange(exchange));
			}).contextWrite(Context.of(GOING_ON, goingOn));
		}).onErrorResume(UnreadableBody.class, (ex) -> this.refusals.refuse(exchange, ex.error));
	}

	/**
	 * Reads the body as the fingerprint reads it into {@code read}: the bytes (a form's
	 * fields, read through the exchange so that the handler reads them too), at most the
	 * configured size.
	 * @return when it is read; failed with {@link UnreadableBody} for a body the door
	 * does not read
	 */
	private CompletableFuture<?> body(ServerWebExchange exchange, ReadBody read) {
		MediaType type = exchange.getRequest().getHeaders().getContentType();
		if (type != null && type.getType().equalsIgnoreCase("multipart")) {
			return CompletableFuture
				.failedFuture(new UnreadableBody(IdempotencyError.of(IdempotencyErrorType.INVALID_KEY,
						"a multipart request cannot carry an idempotency key on this server (WebFlux): send its"
								+ " content as one body, or send it without the key")));
		}
		long declared = exchange.getRequest().getHeaders().getContentLength();
		if (declared > this.settings.maxRequestBytes()) {
			return CompletableFuture.failedFuture(tooLarge("the request body declares " + declared + " bytes"));
		}
		if (MediaType.APPLICATION_FORM_URLENCODED.isCompatibleWith(type)) {
			// Read by WebFlux's form reader (its own limit, see
			// spring.codec.max-in-memory-size), so that the handler reads the same form.
			return exchange.getFormData().doOnNext((form) -> {
				RequestBody body = new RequestBody(Fingerprints.formBody(arrays(form)), null);
				read.set(body, fingerprint(exchange.getRequest(), body.fingerprinted()));
			})
				.onErrorMap(DataBufferLimitException.class,
						(ex) -> new UnreadableBody(IdempotencyError.of(IdempotencyErrorType.REQUEST_TOO_LARGE,
								"the form is longer than WebFlux's form reader reads"
										+ " (spring.codec.max-in-memory-size); nothing was run")))
				.toFuture();
		}
		BodyReader reader = new BodyReader(exchange.getRequest(), read,
				(int) Math.min(Integer.MAX_VALUE, this.settings.maxRequestBytes()), declared);
		exchange.getRequest().getBody().subscribe(reader);
		return reader;
	}

	private static Map<String, String[]> arrays(MultiValueMap<String, String> form) {
		Map<String, String[]> parameters = new LinkedHashMap<>();
		form.forEach((name, values) -> parameters.put(name, values.toArray(String[]::new)));
		return parameters;
	}

	private UnreadableBody tooLarge(String what) {
		return new UnreadableBody(IdempotencyError.of(IdempotencyErrorType.REQUEST_TOO_LARGE, what + ", more than the "
				+ this.settings.maxRequestBytes() + " bytes this server reads for an idempotency key"));
	}

	/**
	 * The engine's decision; if the request is cancelled (the client went away) while it
	 * is being made, a key reserved for it is released.
	 */
	private Mono<Decision> decision(IdempotentCall call, Supplier<CompletableFuture<?>> reading, Executor goingOn) {
		return Mono.deferContextual((context) -> {
			CompletableFuture<Decision> decided;
			// The request's own observation (WebFlux keeps it in the Reactor context) is
			// current while the engine starts the call's: its parent.
			Observation parent = context.getOrDefault(ObservationThreadLocalAccessor.KEY, null);
			try (Observation.Scope scope = (parent != null) ? parent.openScope() : null) {
				decided = this.engine.beginAsync(call, completesAtomically(), this.storeExecutor, reading);
			}
			return EngineSteps.decision(decided, goingOn, (reservation) -> this.engine.failedAsync(reservation,
					"the client went away before it ran", this.storeExecutor));
		});
	}

	/**
	 * Whether a run reserved now completes atomically: its answer recorded in the
	 * transaction of the handler's writes on the store's database, or its key released.
	 * The R2DBC store on PostgreSQL then commits the reservation without waiting for its
	 * WAL flush ({@code ReserveRequest#atomicCompletion()}). Not before the first
	 * protected request found that the store joins the door's transactions.
	 */
	private boolean completesAtomically() {
		ReactiveHandlerTransactions transactions = this.transactions;
		return transactions != null && transactions.storeJoins();
	}

	/**
	 * Runs the handler of a reserved request.
	 * @param request the request with the body the door read, for the handler;
	 * {@code null}: the exchange's own
	 */
	private Mono<Void> run(ServerWebExchange exchange, @Nullable ServerHttpRequest request, WebFilterChain chain,
			Reservation reservation) {
		ReactiveHandlerTransactions transactions = this.transactions;
		if (transactions == null || !transactions.enabled()) {
			return run(exchange, request, chain, reservation, null);
		}
		return transactions
			.inTransaction((transaction) -> run(exchange, request, chain, reservation,
					(transaction != null) ? new Atomic(transactions, transaction) : null))
			.onErrorResume(ReplacedAnswer.class, (ex) -> {
				// Nothing of the held answer was sent: the error replaces it.
				exchange.getResponse().getHeaders().clear();
				return this.refusals.refuse(exchange, ex.error);
			})
			// As on the Spring MVC door: nothing ran, the key is freed, 503.
			.onErrorResume(ReactiveHandlerTransactions.NotBegun.class,
					(ex) -> engineCall(
							() -> this.engine.failedAsync(reservation, ex.reason(), ex.failure(), this.storeExecutor))
						.then(Mono.defer(() -> this.refusals.refuse(exchange,
								new IdempotencyError(IdempotencyErrorType.STORE_UNAVAILABLE, 503,
										"the request's transaction could not begin; nothing was done, retry later",
										this.engine.settings().storeFailure().retryAfter())))))
			// A client gone while the transaction began, before the handler's run (which
			// says so itself): the record is left to its lease, its heartbeats stop.
			.doOnCancel(() -> this.engine.abandoned(reservation, "the client went away while it ran"));
	}

	/**
	 * Runs the handler with its answer held; with {@code transaction}, inside it (atomic
	 * completion, {@link #finishInTransaction}).
	 */
	private Mono<Void> run(ServerWebExchange exchange, @Nullable ServerHttpRequest request, WebFilterChain chain,
			Reservation reservation, @Nullable Atomic atomic) {
		CapturingServerResponse response = new CapturingServerResponse(exchange.getResponse(),
				this.engine.settings().maxBodyBytes(),
				(body) -> (atomic != null)
						? finishInTransaction(exchange, reservation, body, atomic.transactions(), atomic.run())
						: finish(exchange, reservation, body),
				(bytes) -> {
					Mono<Void> released = engineCall(
							() -> this.engine.responseTooLargeAsync(reservation, bytes, this.storeExecutor))
						.then();
					// Streamed as it comes, unrecorded: its writes commit first, as
					// without a transaction.
					return (atomic != null)
							? commitUnrecorded(exchange, reservation, atomic.transactions(), atomic.run(), released)
							: released;
				});
		Observation observation = this.engine.observation(reservation);
		// One exchange for the handler: the body read, the answer held.
		ServerWebExchange.Builder handled = exchange.mutate().response(response);
		if (request != null) {
			handled.request(request);
		}
		return chain.filter(handled.build())
			// The handler's own observations are children of the call's.
			.contextWrite((context) -> (observation != null)
					? context.put(ObservationThreadLocalAccessor.KEY, observation) : context)
			.then(Mono.defer(response::finishEmpty))
			.onErrorResume((ex) -> !(ex instanceof ReplacedAnswer),
					(ex) -> ((atomic != null) ? atomic.transactions().rollback(atomic.run()) : Mono.<Void>empty())
						.then(engineCall(() -> this.engine.failedAsync(reservation, "the handler failed: " + ex, ex,
								this.storeExecutor)))
						.then(Mono.error(ex)))
			// Calls no store.
			.doOnCancel(() -> this.engine.abandoned(reservation, "the client went away while it ran"));
	}

	/**
	 * Atomic completion: the handler ran inside {@code transaction}, still open. The
	 * answer is recorded in it and it commits, and only then is the held answer sent. An
	 * answer that is not recorded (marked not stored, a transaction marked rollback-only,
	 * a status this mode does not record) rolls the handler's writes back first, and is
	 * then finished as without a transaction, except that a success whose writes were
	 * rolled back is never sent: the answer is {@code 503}, nothing was done. A handler
	 * that wrote nothing in the transaction (it has not begun in the database) is
	 * finished as without one: the empty transaction ends first, with nothing sent, and
	 * the answer is recorded alone. A commit that fails with the application's own error
	 * releases the key and leaves the door with that error, for WebFlux's error handling;
	 * a failure of the database is answered {@code 503}. As the Spring MVC door
	 * ({@code IdempotencyFilter}).
	 */
	private Mono<byte[]> finishInTransaction(ServerWebExchange exchange, Reservation reservation, byte[] body,
			ReactiveHandlerTransactions transactions, ReactiveHandlerTransactions.Run transaction) {
		ServerHttpResponse response = exchange.getResponse();
		HttpStatusCode code = response.getStatusCode();
		int status = (code != null) ? code.value() : 200;
		String what = exchange.getRequest().getMethod().name() + " " + exchange.getRequest().getPath().value();
		String rollbackReason = rollbackReason(exchange, status, transaction);
		if (rollbackReason != null) {
			return transactions.rollback(transaction).then(Mono.defer(() -> {
				if (status >= 200 && status < 400) {
					// Its writes were rolled back: the success it reports did not happen.
					return engineCall(() -> this.engine.failedAsync(reservation, rollbackReason, this.storeExecutor))
						.then(Mono.error(new ReplacedAnswer(this.engine.transactionRolledBack(rollbackReason))));
				}
				return finish(exchange, reservation, body);
			}));
		}
		if (transactions.isEmpty(transaction)) {
			// The handler wrote nothing: no write for the record to be atomic with. The
			// empty transaction ends with nothing sent, and the answer is recorded alone.
			return transactions.commit(transaction, what)
				.flatMap((failure) -> failure.isEmpty() ? finish(exchange, reservation, body)
						: failedAlone(reservation, failure.get()));
		}
		StoredResponse own = new StoredResponse(status, this.settings.storedHeaders(response.getHeaders()), body);
		return engineCall(() -> transactions.joining(transaction,
				() -> this.engine.succeededInTransactionAsync(reservation, own, this.storeExecutor)))
			.flatMap((outcome) -> (outcome.commits() ? transactions.commit(transaction, what)
					: transactions.rollback(transaction).then(Mono.just(Optional.<Throwable>empty())))
				.flatMap((failure) -> transactionEnded(response, reservation, body, outcome, failure.orElse(null))));
	}

	/**
	 * Why the handler's transaction must roll back instead of committing with a record;
	 * {@code null}: it commits.
	 */
	private @Nullable String rollbackReason(ServerWebExchange exchange, int status,
			ReactiveHandlerTransactions.Run transaction) {
		Object notStored = exchange.getAttribute(IdempotencyRequestAttributes.NOT_STORED_REASON);
		if (notStored != null) {
			return "the application marked its answer not stored: " + notStored;
		}
		if (transaction.isRollbackOnly()) {
			return "the transaction was marked rollback-only";
		}
		if (!this.engine.records(status)) {
			return "status " + status + " is not recorded";
		}
		return null;
	}

	/** The body to send once the transaction of a recorded answer has ended. */
	private Mono<byte[]> transactionEnded(ServerHttpResponse response, Reservation reservation, byte[] body,
			AtomicOutcome outcome, @Nullable Throwable commitFailure) {
		if (outcome.conflicted() || (commitFailure != null && ReactiveHandlerTransactions.isConflict(commitFailure))) {
			// The database rolled it back to settle a conflict with another transaction,
			// such as another attempt's: nothing of it was done.
			return engineCall(() -> this.engine.transactionConflictedAsync(reservation, outcome, this.storeExecutor))
				.map((after) -> {
					if (after instanceof AtomicOutcome.Replay replay) {
						return replayed(response, replay.response());
					}
					throw new ReplacedAnswer((after instanceof AtomicOutcome.Refuse refuse) ? refuse.error()
							: this.engine.transactionRolledBack("it conflicted with another transaction"));
				});
		}
		if (commitFailure != null && !TransactionFailures.isStoreFailure(commitFailure)) {
			// The application's own writes failed at the commit: answered as if its
			// handler had failed, never as a store outage to retry.
			return engineCall(
					() -> this.engine.commitFailedAsync(reservation, outcome, commitFailure, this.storeExecutor))
				.then(Mono.error(commitFailure));
		}
		boolean committed = outcome.commits() && commitFailure == null;
		return engineCall(() -> this.engine.transactionEndedAsync(reservation, outcome, committed, this.storeExecutor))
			.then(Mono.fromSupplier(() -> {
				if (committed) {
					return body;
				}
				if (outcome instanceof AtomicOutcome.Replay replay) {
					return replayed(response, replay.response());
				}
				throw new ReplacedAnswer((outcome instanceof AtomicOutcome.Refuse refuse) ? refuse.error()
						: this.engine.transactionRolledBack("its commit failed"));
			}));
	}

	/**
	 * An answer too large to store streams to the client unrecorded: its transaction
	 * commits first, then its key is released.
	 */
	private Mono<Void> commitUnrecorded(ServerWebExchange exchange, Reservation reservation,
			ReactiveHandlerTransactions transactions, ReactiveHandlerTransactions.Run transaction,
			Mono<Void> released) {
		String what = exchange.getRequest().getMethod().name() + " " + exchange.getRequest().getPath().value();
		return transactions.commit(transaction, what)
			.flatMap((failure) -> failure.isEmpty() ? released : failedAlone(reservation, failure.get()).then());
	}

	/**
	 * The commit of a transaction that held no record failed: the key is released, and
	 * the answer is the application's failure, or {@code 503} for the database's.
	 */
	private Mono<byte[]> failedAlone(Reservation reservation, Throwable failure) {
		Throwable answer = TransactionFailures.isStoreFailure(failure)
				? new ReplacedAnswer(this.engine.transactionRolledBack("its commit failed")) : failure;
		return engineCall(() -> this.engine.failedAsync(reservation, "its commit failed: " + failure, failure,
				this.storeExecutor))
			.then(Mono.error(answer));
	}

	/** Sets another attempt's recorded answer on the response; gives its body. */
	private static byte[] replayed(ServerHttpResponse response, StoredResponse recorded) {
		response.getHeaders().clear();
		return replayHead(response, recorded);
	}

	/**
	 * Atomic completion: protected handlers run inside a transaction whose commit holds
	 * their record; {@code null}: none (set by the auto-configuration with the R2DBC
	 * store).
	 */
	void setHandlerTransactions(@Nullable ReactiveHandlerTransactions transactions) {
		this.transactions = transactions;
	}

	/**
	 * Stores the handler's answer (or releases the key), then gives the body to send: its
	 * own, or in record-after-success mode the answer another attempt recorded first, its
	 * status and headers set on the response.
	 */
	private Mono<byte[]> finish(ServerWebExchange exchange, Reservation reservation, byte[] body) {
		Object notStored = exchange.getAttribute(IdempotencyRequestAttributes.NOT_STORED_REASON);
		if (notStored != null) {
			return engineCall(() -> this.engine.failedAsync(reservation,
					"the application marked its answer not stored: " + notStored, this.storeExecutor))
				.thenReturn(body);
		}
		ServerHttpResponse response = exchange.getResponse();
		HttpStatusCode status = response.getStatusCode();
		StoredResponse own = new StoredResponse((status != null) ? status.value() : 200,
				this.settings.storedHeaders(response.getHeaders()), body);
		return engineCall(() -> this.engine.succeededAsync(reservation, own, this.storeExecutor)).map((answer) -> {
			if (answer instanceof Answer.Recorded recorded) {
				response.getHeaders().clear();
				return replayHead(response, recorded.response());
			}
			return body;
		});
	}

	/**
	 * A finishing step of the engine, made when subscribed: its store call does not block
	 * (a blocking store's runs alone on the store scheduler). A store that answered at
	 * once costs no thread hop; one that answered on another thread goes on where the
	 * request's protection does ({@link #GOING_ON}: the request's event loop).
	 */
	private <T> Mono<T> engineCall(Supplier<CompletableFuture<T>> call) {
		return Mono.deferContextual((context) -> {
			Executor goingOn = context.hasKey(GOING_ON) ? context.get(GOING_ON) : EngineSteps.NON_BLOCKING;
			return EngineSteps.ended(call.get(), goingOn);
		});
	}

	/**
	 * Writes a stored answer as the answer to a retry, with
	 * {@code Idempotent-Replayed: true}.
	 */
	private static Mono<Void> writeStored(ServerHttpResponse response, StoredResponse stored) {
		byte[] body = replayHead(response, stored);
		if (body.length == 0) {
			return response.setComplete();
		}
		return response.writeWith(Mono.just(response.bufferFactory().wrap(body)));
	}

	/**
	 * Sets a stored answer's status and headers on the response, with
	 * {@code Idempotent-Replayed: true} and its length, and gives its body to send.
	 */
	private static byte[] replayHead(ServerHttpResponse response, StoredResponse stored) {
		response.setStatusCode(HttpStatusCode.valueOf(stored.status()));
		stored.headers().forEach((name, values) -> response.getHeaders().addAll(name, values));
		response.getHeaders().set(IdempotencyInterceptor.REPLAYED_HEADER, "true");
		response.getHeaders().setContentLength(stored.body().length);
		return stored.body();
	}

	/** The same fingerprint as the Spring MVC door's, from the parts as sent. */
	private HttpRequestFingerprint fingerprint(ServerHttpRequest request, byte[] body) {
		return new HttpRequestFingerprint(request.getMethod().name(), request.getURI().getRawPath(),
				request.getURI().getRawQuery(), request.getHeaders().getFirst(HttpHeaders.CONTENT_TYPE), () -> body,
				this.settings.json());
	}

	/**
	 * The request with the body the door read, for the handler to read again: wrapped by
	 * the server's own buffer factory, whose buffers the handler's decoder joins as it
	 * joins the server's (Reactor Netty's: without a copy).
	 */
	private static ServerHttpRequest cached(ServerHttpRequest request, byte[] body, DataBufferFactory buffers) {
		return new ServerHttpRequestDecorator(request) {

			@Override
			public Flux<DataBuffer> getBody() {
				return Flux.defer(() -> Flux.just(buffers.wrap(body)));
			}

		};
	}

	/**
	 * Reads a body without a chain of operators: each buffer is copied into the bytes as
	 * it comes and released; once read, the body and its fingerprint are set on the
	 * {@link ReadBody}, and this stage completes. Past the limit the buffer is released,
	 * the rest cancelled (released by the server as discarded, as under
	 * {@code doOnDiscard}), and the stage fails with {@code 413}. One object where
	 * {@code collect}, {@code map}, {@code doOnDiscard}, {@code onErrorMap},
	 * {@code doOnNext} and {@code toFuture} took one each and a subscriber each (about 1
	 * KB per keyed request).
	 */
	private final class BodyReader extends CompletableFuture<@Nullable Void> implements CoreSubscriber<DataBuffer> {

		private final ServerHttpRequest request;

		private final ReadBody read;

		private final BodyBytes bytes;

		private @Nullable Subscription subscription;

		/** Signals come one after another (Reactive Streams): no volatile needed. */
		private boolean done;

		BodyReader(ServerHttpRequest request, ReadBody read, int max, long declared) {
			this.request = request;
			this.read = read;
			this.bytes = new BodyBytes(max, declared);
		}

		@Override
		public Context currentContext() {
			return RELEASE_DISCARDED;
		}

		@Override
		public void onSubscribe(Subscription subscription) {
			this.subscription = subscription;
			subscription.request(Long.MAX_VALUE);
		}

		@Override
		public void onNext(DataBuffer buffer) {
			if (this.done) {
				DataBufferUtils.release(buffer);
				return;
			}
			try {
				this.bytes.add(buffer);
			}
			catch (DataBufferLimitException ex) {
				DataBufferUtils.release(buffer);
				Subscription upstream = this.subscription;
				if (upstream != null) {
					upstream.cancel();
				}
				onError(ex);
			}
		}

		@Override
		public void onError(Throwable failure) {
			if (this.done) {
				return;
			}
			this.done = true;
			completeExceptionally(
					(failure instanceof DataBufferLimitException) ? tooLarge("the request body is longer") : failure);
		}

		@Override
		public void onComplete() {
			if (this.done) {
				return;
			}
			this.done = true;
			try {
				RequestBody body = this.bytes.read();
				this.read.set(body, fingerprint(this.request, body.fingerprinted()));
			}
			catch (RuntimeException ex) {
				completeExceptionally(ex);
				return;
			}
			complete(null);
		}

	}

	/** A body as it is read, at most {@code max} bytes. */
	private static final class BodyBytes {

		private static final int FIRST_GUESS = 16 * 1024;

		private final int max;

		private byte[] bytes;

		private int length;

		/**
		 * @param declared the declared length ({@code -1}: none): the first guess of the
		 * size, but the client's word only, so at most {@link #FIRST_GUESS} is taken on
		 * it
		 */
		BodyBytes(int max, long declared) {
			this.max = max;
			this.bytes = new byte[(int) Math.max(0, Math.min(declared, Math.min(max, FIRST_GUESS)))];
		}

		void add(DataBuffer buffer) {
			int count = buffer.readableByteCount();
			if (count > this.max - this.length) {
				// Not read: the reader releases it.
				throw new DataBufferLimitException("Exceeded limit on max bytes to buffer : " + this.max);
			}
			if (this.length + count > this.bytes.length) {
				this.bytes = Arrays.copyOf(this.bytes,
						(int) Math.min(this.max, Math.max((long) this.length + count, 2L * this.bytes.length)));
			}
			buffer.read(this.bytes, this.length, count);
			this.length += count;
			DataBufferUtils.release(buffer);
		}

		RequestBody read() {
			byte[] read = (this.length == this.bytes.length) ? this.bytes : Arrays.copyOf(this.bytes, this.length);
			return new RequestBody(read, read);
		}

	}

	/** The body the door read, once it has. */
	private static final class ReadBody {

		private volatile @Nullable RequestBody body;

		private volatile @Nullable HttpRequestFingerprint fingerprint;

		void set(RequestBody body, HttpRequestFingerprint fingerprint) {
			this.body = body;
			this.fingerprint = fingerprint;
		}

		HttpRequestFingerprint fingerprint() {
			return Objects.requireNonNull(this.fingerprint, "the body is read before the fingerprint");
		}

		/**
		 * The exchange the handler gets: with the bytes read, when the door read them.
		 */
		ServerWebExchange exchange(ServerWebExchange exchange) {
			ServerHttpRequest request = request(exchange);
			return (request != null) ? exchange.mutate().request(request).build() : exchange;
		}

		/**
		 * The request the handler gets, with the bytes read; {@code null}: the door did
		 * not read them (the exchange keeps them).
		 */
		@Nullable ServerHttpRequest request(ServerWebExchange exchange) {
			RequestBody read = this.body;
			byte[] bytes = (read != null) ? read.bytes() : null;
			return (bytes != null) ? cached(exchange.getRequest(), bytes, exchange.getResponse().bufferFactory())
					: null;
		}

	}

	/** A run inside a transaction of the door: atomic completion. */
	private record Atomic(ReactiveHandlerTransactions transactions, ReactiveHandlerTransactions.Run run) {
	}

	/**
	 * An error that replaces a held answer whose transaction did not commit (or that the
	 * door refused after it ran): nothing of the answer was sent.
	 */
	@SuppressWarnings("serial")
	private static final class ReplacedAnswer extends RuntimeException {

		private final transient IdempotencyError error;

		ReplacedAnswer(IdempotencyError error) {
			super(error.detail(), null, false, false);
			this.error = error;
		}

	}

	/** A keyed request whose body the door does not read: refused, nothing ran. */
	@SuppressWarnings("serial")
	private static final class UnreadableBody extends RuntimeException {

		private final transient IdempotencyError error;

		UnreadableBody(IdempotencyError error) {
			super(error.detail(), null, false, false);
			this.error = error;
		}

	}

	/**
	 * The body as the door read it.
	 *
	 * @param fingerprinted what the fingerprint reads
	 * @param bytes the bytes to give the handler, {@code null} when the exchange keeps
	 * them (a form)
	 */
	private record RequestBody(byte[] fingerprinted, byte @Nullable [] bytes) {
	}

	/**
	 * What protects a request.
	 *
	 * @param operation the operation's name, kept with the record
	 * @param keyRequired whether a request without a key is refused
	 * @param keyFormat the format of its keys
	 */
	record Protection(String operation, boolean keyRequired, KeyFormat keyFormat) {
	}

}
