package dev.idempotency.web;

import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Supplier;

import dev.idempotency.Idempotent;
import dev.idempotency.core.KeyFormat;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.core.MethodParameter;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ResponseCookie;
import org.springframework.http.codec.multipart.Part;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.util.MultiValueMap;
import org.springframework.web.bind.WebDataBinder;
import org.springframework.web.reactive.HandlerResult;
import org.springframework.web.reactive.function.BodyExtractor;
import org.springframework.web.reactive.function.server.HandlerFilterFunction;
import org.springframework.web.reactive.function.server.HandlerFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.reactive.function.server.support.ServerRequestWrapper;
import org.springframework.web.reactive.function.server.support.ServerResponseResultHandler;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.util.pattern.PathPattern;

/**
 * The HTTP front door for a WebFlux functional route: the same door, properties and
 * answers as for an {@link Idempotent} annotated handler. Inject the bean the starter
 * declares and add it to the routes to protect:
 *
 * <pre class="code">
 * &#64;Bean
 * RouterFunction&lt;ServerResponse&gt; orders(OrderHandler orders, IdempotencyHandlerFilterFunction idempotency) {
 *     return route().POST("/orders", orders::create).filter(idempotency).build();
 * }
 * </pre>
 *
 * A mutation (POST, PUT, PATCH, DELETE) with an {@code Idempotency-Key} then runs its
 * handler once; a retry gets the stored answer with {@code Idempotent-Replayed: true},
 * the same key with another request is refused ({@code 422}), as on an annotated handler.
 * The handler's answer is written by this filter (through the application's
 * {@link ServerResponseResultHandler}) so that it can be held until stored: filters added
 * after it on the route (an {@code onError} among them) run inside it and their answers
 * are stored too; filters added before it see an answer already written.
 * <p>
 * {@link #withOperation}, {@link #withKeyRequired} and {@link #withKeyFormat} give a copy
 * with the settings of the {@link Idempotent} attributes of the same names. A route that
 * also matches {@code idempotency.web.path-patterns} is protected once, by the path
 * pattern (the door that reaches the request first), with its settings.
 *
 * @since 0.1.0
 */
public final class IdempotencyHandlerFilterFunction
		implements HandlerFilterFunction<ServerResponse, ServerResponse>, SmartInitializingSingleton {

	/** The return type of a handler function, as WebFlux's own adapter gives it. */
	private static final MethodParameter HANDLER_RETURN_TYPE;

	static {
		try {
			HANDLER_RETURN_TYPE = new MethodParameter(HandlerFunction.class.getMethod("handle", ServerRequest.class),
					-1);
		}
		catch (NoSuchMethodException ex) {
			throw new IllegalStateException(ex);
		}
	}

	private final WebFluxDoor door;

	private final Responses responses;

	private final @Nullable String operation;

	private final boolean keyRequired;

	private final KeyFormat keyFormat;

	/**
	 * @param responses what writes a handler's answer as WebFlux would (looked up once
	 * every singleton exists)
	 */
	IdempotencyHandlerFilterFunction(WebFluxDoor door, Supplier<ServerResponseResultHandler> responses) {
		this(door, new Responses(responses), null, false, KeyFormat.DEFAULT);
	}

	private IdempotencyHandlerFilterFunction(WebFluxDoor door, Responses responses, @Nullable String operation,
			boolean keyRequired, KeyFormat keyFormat) {
		this.door = door;
		this.responses = responses;
		this.operation = operation;
		this.keyRequired = keyRequired;
		this.keyFormat = keyFormat;
	}

	/**
	 * A copy of this filter whose operation has this name, kept with the record for
	 * diagnostics and metrics (see {@link Idempotent#operation()}). Without it, the
	 * route's method and pattern, such as {@code POST /orders}.
	 * @param operation the operation's name
	 * @return the copy
	 */
	public IdempotencyHandlerFilterFunction withOperation(String operation) {
		return new IdempotencyHandlerFilterFunction(this.door, this.responses, operation, this.keyRequired,
				this.keyFormat);
	}

	/**
	 * A copy of this filter that refuses a request without a key
	 * ({@code 400 key-required}) instead of running it unprotected (see
	 * {@link Idempotent#keyRequired()}).
	 * @param keyRequired whether a request without a key is refused
	 * @return the copy
	 */
	public IdempotencyHandlerFilterFunction withKeyRequired(boolean keyRequired) {
		return new IdempotencyHandlerFilterFunction(this.door, this.responses, this.operation, keyRequired,
				this.keyFormat);
	}

	/**
	 * A copy of this filter whose keys have this format (see
	 * {@link Idempotent#keyFormat()}); {@link KeyFormat#DEFAULT} means
	 * {@code idempotency.key.format}.
	 * @param keyFormat the format of the route's keys
	 * @return the copy
	 */
	public IdempotencyHandlerFilterFunction withKeyFormat(KeyFormat keyFormat) {
		return new IdempotencyHandlerFilterFunction(this.door, this.responses, this.operation, this.keyRequired,
				keyFormat);
	}

	/**
	 * Looks up what writes the handlers' answers before any request: never on an event
	 * loop, nor under a lock there.
	 */
	@Override
	public void afterSingletonsInstantiated() {
		this.responses.get();
	}

	@Override
	public Mono<ServerResponse> filter(ServerRequest request, HandlerFunction<ServerResponse> next) {
		ServerWebExchange exchange = request.exchange();
		if (!HttpMethods.isMutation(request.method().name()) || WebFluxDoor.isProtected(exchange)) {
			return next.handle(request);
		}
		WebFluxDoor.Protection protection = new WebFluxDoor.Protection(operation(request), this.keyRequired,
				this.keyFormat.orElse(this.door.settings().keyFormat()));
		return this.door
			.protect(exchange, protection,
					(handled) -> next.handle(over(request, handled)).flatMap((response) -> write(handled, response)))
			.then(Mono.fromSupplier(() -> new WrittenResponse(exchange.getResponse())));
	}

	private String operation(ServerRequest request) {
		if (this.operation != null) {
			return this.operation;
		}
		Object pattern = request.attribute(RouterFunctions.MATCHING_PATTERN_ATTRIBUTE).orElse(null);
		return request.method().name() + " "
				+ ((pattern instanceof PathPattern matched) ? matched.getPatternString() : request.path());
	}

	/**
	 * Writes the handler's answer to the exchange the door gave it (the capture), as
	 * WebFlux would have written it.
	 */
	private Mono<Void> write(ServerWebExchange exchange, ServerResponse response) {
		return this.responses.get().handleResult(exchange, new HandlerResult(this, response, HANDLER_RETURN_TYPE));
	}

	/**
	 * The request as the handler reads it: its body and exchange those the door gives it
	 * (the body the door read, the response it captures), all else the route's request.
	 */
	private static ServerRequest over(ServerRequest request, ServerWebExchange exchange) {
		return (exchange == request.exchange()) ? request : new DoorRequest(request, exchange);
	}

	/** The application's writer of a handler function's answer, looked up once. */
	private static final class Responses {

		private final Supplier<ServerResponseResultHandler> lookup;

		private volatile @Nullable ServerResponseResultHandler resolved;

		Responses(Supplier<ServerResponseResultHandler> lookup) {
			this.lookup = lookup;
		}

		ServerResponseResultHandler get() {
			ServerResponseResultHandler resolved = this.resolved;
			if (resolved == null) {
				resolved = this.lookup.get();
				this.resolved = resolved;
			}
			return resolved;
		}

	}

	/** The route's request over the exchange the door gives the handler. */
	private static final class DoorRequest extends ServerRequestWrapper {

		private final ServerWebExchange exchange;

		private final ServerRequest body;

		DoorRequest(ServerRequest request, ServerWebExchange exchange) {
			super(request);
			this.exchange = exchange;
			this.body = ServerRequest.create(exchange, request.messageReaders());
		}

		@Override
		public ServerWebExchange exchange() {
			return this.exchange;
		}

		@Override
		public <T> T body(BodyExtractor<T, ? super ServerHttpRequest> extractor) {
			return this.body.body(extractor);
		}

		@Override
		public <T> T body(BodyExtractor<T, ? super ServerHttpRequest> extractor, Map<String, Object> hints) {
			return this.body.body(extractor, hints);
		}

		@Override
		public <T> Mono<T> bodyToMono(Class<? extends T> elementClass) {
			return this.body.bodyToMono(elementClass);
		}

		@Override
		public <T> Mono<T> bodyToMono(ParameterizedTypeReference<T> typeReference) {
			return this.body.bodyToMono(typeReference);
		}

		@Override
		public <T> Flux<T> bodyToFlux(Class<? extends T> elementClass) {
			return this.body.bodyToFlux(elementClass);
		}

		@Override
		public <T> Flux<T> bodyToFlux(ParameterizedTypeReference<T> typeReference) {
			return this.body.bodyToFlux(typeReference);
		}

		@Override
		public <T> Mono<T> bind(Class<T> bindType) {
			return this.body.bind(bindType);
		}

		@Override
		public <T> Mono<T> bind(Class<T> bindType, Consumer<WebDataBinder> dataBinderCustomizer) {
			return this.body.bind(bindType, dataBinderCustomizer);
		}

		@Override
		public Mono<MultiValueMap<String, String>> formData() {
			return this.body.formData();
		}

		@Override
		public Mono<MultiValueMap<String, Part>> multipartData() {
			return this.body.multipartData();
		}

	}

	/**
	 * What the route answers once the door has written the answer (the handler's, a
	 * replay or a refusal): its status and headers as written, nothing more to write.
	 */
	private static final class WrittenResponse implements ServerResponse {

		private final ServerHttpResponse response;

		WrittenResponse(ServerHttpResponse response) {
			this.response = response;
		}

		@Override
		public HttpStatusCode statusCode() {
			HttpStatusCode status = this.response.getStatusCode();
			return (status != null) ? status : HttpStatus.OK;
		}

		@Override
		public HttpHeaders headers() {
			return this.response.getHeaders();
		}

		@Override
		public MultiValueMap<String, ResponseCookie> cookies() {
			return this.response.getCookies();
		}

		@Override
		public Mono<Void> writeTo(ServerWebExchange exchange, Context context) {
			return Mono.empty();
		}

	}

}
