package dev.idempotency.web;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

import dev.idempotency.IdempotencyRequestAttributes;
import dev.idempotency.autoconfigure.internal.EngineSteps;
import dev.idempotency.core.IdempotencyError;
import dev.idempotency.core.IdempotencyErrorType;
import dev.idempotency.core.KeyFormat;
import dev.idempotency.core.internal.Answer;
import dev.idempotency.core.internal.Decision;
import dev.idempotency.core.internal.Fingerprints;
import dev.idempotency.core.internal.IdempotencyEngine;
import dev.idempotency.core.internal.IdempotentCall;
import dev.idempotency.core.internal.Reservation;
import dev.idempotency.store.StoredResponse;
import io.micrometer.observation.Observation;
import io.micrometer.observation.contextpropagation.ObservationThreadLocalAccessor;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
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

	private final IdempotencyEngine engine;

	private final ServerIdempotencyScopeResolver scopeResolver;

	private final ServerRefusals refusals;

	private final WebDoorSettings settings;

	private final Executor storeExecutor;

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
			Supplier<CompletableFuture<?>> reading = () -> body(exchange)
				.doOnNext((body) -> read.set(body, fingerprint(exchange.getRequest(), body.fingerprinted())))
				.toFuture();
			Executor goingOn = EngineSteps.goingOnFor(exchange.getRequest());
			return decision(call, reading, goingOn).flatMap((decision) -> {
				if (decision instanceof Decision.Replay replay) {
					return writeStored(exchange.getResponse(), replay.response());
				}
				if (decision instanceof Decision.Reject reject) {
					return this.refusals.refuse(exchange, reject.error());
				}
				ServerWebExchange withBody = read.exchange(exchange);
				Reservation reservation = ((Decision.Proceed) decision).reservation();
				return (reservation != null) ? run(withBody, chain, reservation, goingOn) : chain.filter(withBody);
			});
		}).onErrorResume(UnreadableBody.class, (ex) -> this.refusals.refuse(exchange, ex.error));
	}

	/**
	 * The body as the fingerprint reads it: the bytes (a form's fields, read through the
	 * exchange so that the handler reads them too), at most the configured size.
	 */
	private Mono<RequestBody> body(ServerWebExchange exchange) {
		MediaType type = exchange.getRequest().getHeaders().getContentType();
		if (type != null && type.getType().equalsIgnoreCase("multipart")) {
			return Mono.error(new UnreadableBody(IdempotencyError.of(IdempotencyErrorType.INVALID_KEY,
					"a multipart request cannot carry an idempotency key on this server (WebFlux): send its"
							+ " content as one body, or send it without the key")));
		}
		long declared = exchange.getRequest().getHeaders().getContentLength();
		if (declared > this.settings.maxRequestBytes()) {
			return Mono.error(tooLarge("the request body declares " + declared + " bytes"));
		}
		if (MediaType.APPLICATION_FORM_URLENCODED.isCompatibleWith(type)) {
			// Read by WebFlux's form reader (its own limit, see
			// spring.codec.max-in-memory-size), so that the handler reads the same form.
			return exchange.getFormData()
				.map((form) -> new RequestBody(Fingerprints.formBody(arrays(form)), null))
				.onErrorMap(DataBufferLimitException.class,
						(ex) -> new UnreadableBody(IdempotencyError.of(IdempotencyErrorType.REQUEST_TOO_LARGE,
								"the form is longer than WebFlux's form reader reads"
										+ " (spring.codec.max-in-memory-size); nothing was run")));
		}
		int max = (int) Math.min(Integer.MAX_VALUE, this.settings.maxRequestBytes());
		return DataBufferUtils.join(exchange.getRequest().getBody(), max).map((joined) -> {
			byte[] bytes = new byte[joined.readableByteCount()];
			joined.read(bytes);
			DataBufferUtils.release(joined);
			return new RequestBody(bytes, bytes);
		})
			.defaultIfEmpty(new RequestBody(new byte[0], new byte[0]))
			.onErrorMap(DataBufferLimitException.class, (ex) -> tooLarge("the request body is longer"));
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
				decided = this.engine.beginAsync(call, false, this.storeExecutor, reading);
			}
			return EngineSteps.decision(decided, goingOn, (reservation) -> this.engine.failedAsync(reservation,
					"the client went away before it ran", this.storeExecutor));
		});
	}

	private Mono<Void> run(ServerWebExchange exchange, WebFilterChain chain, Reservation reservation,
			Executor goingOn) {
		CapturingServerResponse response = new CapturingServerResponse(exchange.getResponse(),
				this.engine.settings().maxBodyBytes(), (body) -> finish(exchange, reservation, body, goingOn),
				(bytes) -> engineCall(() -> this.engine.responseTooLargeAsync(reservation, bytes, this.storeExecutor),
						goingOn)
					.then());
		Observation observation = this.engine.observation(reservation);
		return chain.filter(exchange.mutate().response(response).build())
			// The handler's own observations are children of the call's.
			.contextWrite((context) -> (observation != null)
					? context.put(ObservationThreadLocalAccessor.KEY, observation) : context)
			.then(Mono.defer(response::finishEmpty))
			.onErrorResume((ex) -> engineCall(
					() -> this.engine.failedAsync(reservation, "the handler failed: " + ex, ex, this.storeExecutor),
					goingOn)
				.then(Mono.error(ex)))
			// Calls no store.
			.doOnCancel(() -> this.engine.abandoned(reservation, "the client went away while it ran"));
	}

	/**
	 * Stores the handler's answer (or releases the key), then gives the body to send: its
	 * own, or in record-after-success mode the answer another attempt recorded first, its
	 * status and headers set on the response.
	 */
	private Mono<byte[]> finish(ServerWebExchange exchange, Reservation reservation, byte[] body, Executor goingOn) {
		Object notStored = exchange.getAttribute(IdempotencyRequestAttributes.NOT_STORED_REASON);
		if (notStored != null) {
			return engineCall(() -> this.engine.failedAsync(reservation,
					"the application marked its answer not stored: " + notStored, this.storeExecutor), goingOn)
				.thenReturn(body);
		}
		ServerHttpResponse response = exchange.getResponse();
		HttpStatusCode status = response.getStatusCode();
		StoredResponse own = new StoredResponse((status != null) ? status.value() : 200,
				this.settings.storedHeaders(response.getHeaders()), body);
		return engineCall(() -> this.engine.succeededAsync(reservation, own, this.storeExecutor), goingOn)
			.map((answer) -> {
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
	 * once costs no thread hop; one that answered on another thread goes on through
	 * {@code goingOn} (the request's event loop).
	 */
	private <T> Mono<T> engineCall(Supplier<CompletableFuture<T>> call, Executor goingOn) {
		return Mono.defer(() -> EngineSteps.ended(call.get(), goingOn));
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

	/** The request with the body the door read, for the handler to read again. */
	private static ServerHttpRequest cached(ServerHttpRequest request, byte[] body) {
		return new ServerHttpRequestDecorator(request) {

			@Override
			public Flux<DataBuffer> getBody() {
				return Flux.defer(() -> Flux.just(DefaultDataBufferFactory.sharedInstance.wrap(body)));
			}

		};
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
			RequestBody read = this.body;
			byte[] bytes = (read != null) ? read.bytes() : null;
			return (bytes != null) ? exchange.mutate().request(cached(exchange.getRequest(), bytes)).build() : exchange;
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
