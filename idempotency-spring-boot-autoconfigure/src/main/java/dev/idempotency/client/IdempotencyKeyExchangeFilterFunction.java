package dev.idempotency.client;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;

import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpHeaders;
import org.springframework.web.reactive.function.client.ClientRequest;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.ExchangeFunction;
import org.springframework.web.reactive.function.client.WebClientRequestException;

/**
 * The {@link IdempotencyKeyClientInterceptor} for {@code WebClient}, with the same
 * {@link IdempotencyKeyClientInterceptor.Settings settings} and the same rule: each call
 * of the configured methods gets one {@code Idempotency-Key} (a fresh UUIDv7, or the one
 * the caller set) kept on every retry of that call; it is retried on an error on the way
 * (a {@link WebClientRequestException} or an {@link IOException}: the request may have
 * reached the server) and on the answers that may not have been the operation's
 * ({@code 408}, {@code 429}, {@code 500}, {@code 502}, {@code 503}, {@code 504}, the
 * server's in-flight problem), waiting what {@code Retry-After} asks or the configured
 * backoff, never past the key's lifetime (the call then fails with an
 * {@link IdempotencyKeyExpiredException}). Every other answer is the caller's, at once.
 * <p>
 * Non-blocking: the waits are {@link Mono#delay delays} on Reactor's parallel scheduler,
 * no thread is held. The body of a retried answer is released before the next attempt.
 * Each attempt writes the request's body again, as the request's {@code BodyInserter}
 * writes it: a body from a value ({@code bodyValue}) or from a publisher that can be
 * subscribed again; a one-shot publisher cannot be retried.
 *
 * @since 0.1.0
 */
public class IdempotencyKeyExchangeFilterFunction implements ExchangeFilterFunction {

	private final IdempotencyKeyClientInterceptor.Settings settings;

	private final Clock clock;

	public IdempotencyKeyExchangeFilterFunction(IdempotencyKeyClientInterceptor.Settings settings) {
		this(settings, Clock.systemUTC());
	}

	IdempotencyKeyExchangeFilterFunction(IdempotencyKeyClientInterceptor.Settings settings, Clock clock) {
		this.settings = settings;
		this.clock = clock;
	}

	public IdempotencyKeyClientInterceptor.Settings settings() {
		return this.settings;
	}

	@Override
	public Mono<ClientResponse> filter(ClientRequest request, ExchangeFunction next) {
		if (!this.settings.methods().contains(request.method())) {
			return next.exchange(request);
		}
		return Mono.defer(() -> {
			Instant created = this.clock.instant();
			String key = request.headers().getFirst(this.settings.headerName());
			ClientRequest keyed = request;
			if (key == null) {
				key = UuidV7.next(created.toEpochMilli());
				keyed = ClientRequest.from(request).header(this.settings.headerName(), key).build();
			}
			RetryRule rule = new RetryRule(this.settings, this.clock, request.method() + " " + request.url(), key,
					created);
			return attempt(keyed, next, rule, 1);
		});
	}

	private Mono<ClientResponse> attempt(ClientRequest request, ExchangeFunction next, RetryRule rule, int made) {
		Mono<Attempt> attempt = next.exchange(request)
			.flatMap(IdempotencyKeyExchangeFilterFunction::classify)
			.onErrorResume(IdempotencyKeyExchangeFilterFunction::lostOnTheWay,
					(error) -> Mono.just(new Attempt(null, false, error)));
		// Decided outside the error handler above, so that a later attempt's error is
		// not taken for this one's.
		return attempt.flatMap((outcome) -> {
			ClientResponse response = outcome.response();
			if (response != null && !outcome.retry()) {
				return Mono.just(response);
			}
			Duration wait = (response != null)
					? rule.next(made, response.statusCode().value(),
							response.headers().asHttpHeaders().getFirst(HttpHeaders.RETRY_AFTER), null)
					: rule.next(made, null, null, outcome.error());
			if (wait == null) {
				IdempotencyKeyExpiredException expired = rule.expired();
				if (response == null) {
					return Mono.error((expired != null) ? expired : Objects.requireNonNull(outcome.error()));
				}
				return (expired != null) ? response.releaseBody().then(Mono.<ClientResponse>error(expired))
						: Mono.just(response);
			}
			Mono<Void> released = (response != null) ? response.releaseBody() : Mono.empty();
			return released.then(Mono.delay(wait)).then(Mono.defer(() -> attempt(request, next, rule, made + 1)));
		});
	}

	/**
	 * An answer and whether it is retried; the in-flight problem is read to tell, and
	 * given back to the caller with its body.
	 */
	private static Mono<Attempt> classify(ClientResponse response) {
		int status = response.statusCode().value();
		if (RetryRule.retriedStatus(status)) {
			return Mono.just(new Attempt(response, true, null));
		}
		if (!RetryRule.mayBeInFlight(status, response.headers().contentType().orElse(null))) {
			return Mono.just(new Attempt(response, false, null));
		}
		// The body's buffers as they came, whatever its length (not through a codec and
		// its in-memory limit): its head tells, and the caller reads it whole.
		return response.bodyToFlux(DataBuffer.class).collectList().map((buffers) -> {
			ClientResponse readAgain = response.mutate().body(Flux.fromIterable(buffers)).build();
			return new Attempt(readAgain, RetryRule.inFlightType(head(buffers)), null);
		});
	}

	/** The first bytes of a body, as many as the in-flight problem is looked for in. */
	private static byte[] head(List<DataBuffer> buffers) {
		ByteArrayOutputStream head = new ByteArrayOutputStream();
		for (DataBuffer buffer : buffers) {
			int from = buffer.readPosition();
			int end = Math.min(buffer.writePosition(), from + RetryRule.IN_FLIGHT_PEEK_BYTES - head.size());
			for (int i = from; i < end; i++) {
				head.write(buffer.getByte(i));
			}
			if (head.size() >= RetryRule.IN_FLIGHT_PEEK_BYTES) {
				break;
			}
		}
		return head.toByteArray();
	}

	private static boolean lostOnTheWay(Throwable error) {
		return error instanceof WebClientRequestException || error instanceof IOException;
	}

	/** One attempt's answer (retried or not), or its error on the way. */
	private record Attempt(@Nullable ClientResponse response, boolean retry, @Nullable Throwable error) {
	}

}
