package dev.idempotency.client;

import java.time.Clock;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.core.io.buffer.DataBuffer;
import org.junit.jupiter.api.Test;
import java.util.Map;
import java.time.Duration;

import reactor.core.Exceptions;
import reactor.core.publisher.Mono;

import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientRequestException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The client contract through {@code WebClient} (Reactor Netty) with the filter function:
 * a lost attempt reaches the caller as a {@link WebClientRequestException}, an expired
 * key as the error of the call's {@code Mono}.
 */
class IdempotencyKeyExchangeFilterFunctionTests extends AbstractIdempotencyKeyClientTests {

	@Override
	Client client(IdempotencyKeyClientInterceptor.Settings settings, Clock clock) {
		WebClient client = WebClient.builder()
			.filter(new IdempotencyKeyExchangeFilterFunction(settings, clock))
			.build();
		return new Client() {

			@Override
			public String post(String body) {
				return answer(client.post().uri(uri()).bodyValue(body).exchangeToMono(this::read));
			}

			@Override
			public String post(String body, String key) {
				return answer(client.post()
					.uri(uri())
					.header("Idempotency-Key", key)
					.bodyValue(body)
					.exchangeToMono(this::read));
			}

			@Override
			public String get() {
				return answer(client.get().uri(uri()).exchangeToMono(this::read));
			}

			private Mono<String> read(ClientResponse response) {
				return response.bodyToMono(String.class)
					.defaultIfEmpty("")
					.map((body) -> response.statusCode().value() + " " + body);
			}

		};
	}

	/**
	 * A conflict or an in-flight problem is read to tell which it is, through no codec's
	 * in-memory limit: a {@code 409} with a body over WebFlux's 256 KB is the caller's,
	 * whole (before, the call failed with {@code DataBufferLimitException}), and an
	 * in-flight problem that long is retried.
	 */
	@Test
	void aConflictWithABodyOverTheCodecsLimitIsTheCallersWhole() {
		String padding = " ".repeat(300 * 1024);
		String conflict = "{\"error\":\"exists\"" + padding + "}";
		script(answer(409, Map.of("Content-Type", "application/json"), conflict));
		WebClient client = WebClient.builder()
			.filter(new IdempotencyKeyExchangeFilterFunction(settings(4, null), Clock.systemUTC()))
			.build();
		String answer = answer(client.post()
			.uri(uri())
			.bodyValue("x")
			.exchangeToMono((response) -> DataBufferUtils.join(response.bodyToFlux(DataBuffer.class)).map((body) -> {
				int length = body.readableByteCount();
				DataBufferUtils.release(body);
				return response.statusCode().value() + " " + length;
			})));
		assertThat(answer).isEqualTo("409 " + conflict.length());
		assertThat(this.received).hasSize(1);

		this.received.clear();
		String inFlight = IN_FLIGHT_PROBLEM.substring(0, IN_FLIGHT_PROBLEM.length() - 1) + padding + "}";
		script(answer(409, Map.of("Content-Type", "application/problem+json"), inFlight),
				answer(200, Map.of(), "replayed"));
		assertThat(answer(client.post()
			.uri(uri())
			.bodyValue("x")
			.exchangeToMono((response) -> response.bodyToMono(String.class)
				.map((body) -> response.statusCode().value() + " " + body))))
			.isEqualTo("200 replayed");
		assertThat(this.received).hasSize(2);
	}

	private static String answer(Mono<String> call) {
		String answer = call.block(Duration.ofSeconds(30));
		assertThat(answer).isNotNull();
		return answer;
	}

	@Override
	Class<? extends Throwable> lostType() {
		return WebClientRequestException.class;
	}

	@Override
	IdempotencyKeyExpiredException expired(Throwable thrown) {
		Throwable error = Exceptions.unwrap(thrown);
		assertThat(error).isInstanceOf(IdempotencyKeyExpiredException.class);
		return (IdempotencyKeyExpiredException) error;
	}

}
