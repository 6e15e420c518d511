package dev.idempotency.web;

import java.time.Duration;
import java.util.Map;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyRequestAttributes;
import reactor.core.publisher.Mono;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.task.SimpleAsyncTaskExecutor;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.config.BlockingExecutionConfigurer;
import org.springframework.web.reactive.config.WebFluxConfigurer;
import org.springframework.web.server.ServerWebExchange;

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

		@PostMapping("/exchange/not-stored")
		@Idempotent
		Mono<Map<String, Object>> notStored(ServerWebExchange exchange) {
			exchange.getAttributes().put(IdempotencyRequestAttributes.NOT_STORED_REASON, "it reports a passing state");
			return Mono.fromSupplier(() -> Map.of("run", this.runs.count("exchange-not-stored")));
		}

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
