package dev.idempotency.client;

import java.time.Clock;
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
