package dev.idempotency.web;

import java.time.Duration;
import java.util.Map;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyRequestAttributes;
import dev.idempotency.test.TestKeys;
import org.junit.jupiter.api.Test;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.task.SimpleAsyncTaskExecutor;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.config.BlockingExecutionConfigurer;
import org.springframework.web.reactive.config.WebFluxConfigurer;
import org.springframework.web.server.ServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The WebFlux suite against annotated controllers ({@link WebTestApplication}'s and
 * {@link ExchangeController}), protected by {@link IdempotencyWebFilter}. The handlers
 * that return plain values run on an executor of their own
 * ({@code configureBlockingExecution}), as a WebFlux application that blocks must.
 */
@SpringBootTest(
		classes = { WebTestApplication.class, WebFluxIdempotencyWebTests.BlockingHandlers.class,
				WebFluxIdempotencyWebTests.ExchangeController.class },
		webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { AbstractIdempotencyWebTests.PROPERTIES_PATTERN, AbstractIdempotencyWebTests.PROPERTIES_WAIT,
				AbstractIdempotencyWebTests.PROPERTIES_MAX_BODY, "spring.main.web-application-type=reactive" })
class WebFluxIdempotencyWebTests extends AbstractWebFluxIdempotencyWebTests {

	@RestController
	static class ExchangeController {

		private final WebTestApplication.Runs runs;

		ExchangeController(WebTestApplication.Runs runs) {
			this.runs = runs;
		}

		@PostMapping("/exchange/slow")
		@Idempotent
		Mono<Map<String, Object>> slow() {
			return Mono.defer(() -> {
				int run = this.runs.count("exchange-slow");
				return Mono.delay(Duration.ofSeconds(2)).map((tick) -> Map.of("run", run));
			});
		}

		/** The thread the handler runs on, in its answer. */
		@PostMapping("/exchange/thread")
		@Idempotent
		Mono<Map<String, Object>> thread() {
			return Mono.fromSupplier(() -> Map.of("thread", Thread.currentThread().getName()));
		}

		@PostMapping("/exchange/not-stored")
		@Idempotent
		Mono<Map<String, Object>> notStored(ServerWebExchange exchange) {
			exchange.getAttributes().put(IdempotencyRequestAttributes.NOT_STORED_REASON, "it reports a passing state");
			return Mono.fromSupplier(() -> Map.of("run", this.runs.count("exchange-not-stored")));
		}

		/**
		 * The method door's (its key from the path), beside the HTTP door's handlers
		 * above: the method door then proxies this controller, and its keyless handlers
		 * must still go through to the HTTP door's protection.
		 */
		@PostMapping("/exchange/keyed/{id}")
		@Idempotent(key = "#id")
		public Mono<Map<String, Object>> keyed(@PathVariable String id) {
			return Mono.fromSupplier(() -> Map.of("run", this.runs.count("exchange-keyed-" + id)));
		}

	}

	/**
	 * A controller with a keyless handler beside a keyed method (the two doors on one
	 * class): the keyless handler is the HTTP door's, replayed under the header's key;
	 * the keyed method is the method door's, run once per key with or without the header.
	 * Before, the method door's proxy refused every call of the keyless handler on
	 * WebFlux ({@code 500}: "called outside a web request"), as it looked for a Spring
	 * MVC request only.
	 */
	@Test
	void aKeylessHandlerBesideAKeyedMethodIsTheHttpDoorsAndTheKeyedOneTheMethodDoors() {
		String key = TestKeys.newKey();
		Map<?, ?> first = exchangePost("/exchange/not-stored", null);
		assertThat(first.get("run")).as("unkeyed, it runs").isNotNull();
		EntityExchangeResult<byte[]> run = client().post()
			.uri("/exchange/thread")
			.header("Idempotency-Key", key)
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.returnResult();
		EntityExchangeResult<byte[]> replay = client().post()
			.uri("/exchange/thread")
			.header("Idempotency-Key", key)
			.exchange()
			.expectStatus()
			.isOk()
			.expectHeader()
			.valueEquals("Idempotent-Replayed", "true")
			.expectBody()
			.returnResult();
		assertThat(replay.getResponseBody()).isEqualTo(run.getResponseBody());
		String id = TestKeys.newKey();
		assertThat(exchangePost("/exchange/keyed/" + id, null).get("run")).isEqualTo(1);
		assertThat(exchangePost("/exchange/keyed/" + id, TestKeys.newKey()).get("run"))
			.as("the method door's replay, whatever the header")
			.isEqualTo(1);
	}

	private Map<?, ?> exchangePost(String path, @Nullable String key) {
		return client().post().uri(path).headers((headers) -> {
			if (key != null) {
				headers.set("Idempotency-Key", key);
			}
		}).exchange().expectStatus().isOk().expectBody(Map.class).returnResult().getResponseBody();
	}

	/**
	 * A protected handler runs where WebFlux runs an unprotected one, on the request's
	 * event loop, also when the store answered on a thread of its own (Lettuce's event
	 * loop, a driver's, the bounded scheduler of a blocking store): not on Reactor's
	 * parallel scheduler, a hand-off there and another back to write the answer.
	 */
	@Test
	void aProtectedHandlerRunsOnTheRequestsEventLoopAsAnUnprotectedOneDoes() {
		String unprotected = handlerThread(null);
		assertThat(unprotected).as("an unprotected handler's thread").doesNotStartWith("parallel-");
		for (int i = 0; i < 3; i++) {
			assertThat(handlerThread(TestKeys.newKey())).as("a protected handler's thread")
				.startsWith(unprotected.replaceAll("\\d+$", ""));
		}
	}

	private String handlerThread(@Nullable String key) {
		return exchangePost("/exchange/thread", key).get("thread").toString();
	}

	/** Handlers that return plain values (and may block) run off the event loop. */
	@Configuration(proxyBeanMethods = false)
	static class BlockingHandlers {

		@Bean
		WebFluxConfigurer blockingHandlers() {
			return new WebFluxConfigurer() {

				@Override
				public void configureBlockingExecution(BlockingExecutionConfigurer configurer) {
					configurer.setExecutor(new SimpleAsyncTaskExecutor("blocking-handler-"));
				}

			};
		}

	}

}
