package dev.idempotency.client;

import java.nio.charset.StandardCharsets;
import java.time.Clock;

import org.springframework.http.client.JdkClientHttpRequestFactory;
import org.springframework.web.client.ResourceAccessException;
import org.springframework.web.client.RestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The client contract through {@code RestClient} with the interceptor: a lost attempt and
 * an expired key reach the caller inside a {@link ResourceAccessException}.
 */
class IdempotencyKeyClientInterceptorTests extends AbstractIdempotencyKeyClientTests {

	@Override
	Client client(IdempotencyKeyClientInterceptor.Settings settings, Clock clock) {
		RestClient client = RestClient.builder()
			.requestFactory(new JdkClientHttpRequestFactory())
			.requestInterceptor(new IdempotencyKeyClientInterceptor(settings, clock))
			.build();
		return new Client() {

			@Override
			public String post(String body) {
				return client.post().uri(uri()).body(body).exchange((request, response) -> answer(response));
			}

			@Override
			public String post(String body, String key) {
				return client.post()
					.uri(uri())
					.header("Idempotency-Key", key)
					.body(body)
					.exchange((request, response) -> answer(response));
			}

			@Override
			public String get() {
				return client.get().uri(uri()).exchange((request, response) -> answer(response));
			}

		};
	}

	private static String answer(org.springframework.http.client.ClientHttpResponse response)
			throws java.io.IOException {
		return response.getStatusCode().value() + " "
				+ new String(response.getBody().readAllBytes(), StandardCharsets.UTF_8);
	}

	@Override
	Class<? extends Throwable> lostType() {
		return ResourceAccessException.class;
	}

	@Override
	IdempotencyKeyExpiredException expired(Throwable thrown) {
		assertThat(thrown).isInstanceOf(ResourceAccessException.class)
			.cause()
			.isInstanceOf(IdempotencyKeyExpiredException.class);
		return (IdempotencyKeyExpiredException) thrown.getCause();
	}

}
