package dev.idempotency.web;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import dev.idempotency.Idempotent;
import dev.idempotency.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempotency.method.IdempotencyMethodAutoConfiguration;
import dev.idempotency.test.TestKeys;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.boot.webflux.autoconfigure.WebFluxAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.WebFilter;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A WebFlux application with the starter: a fresh one, as the README makes it, is
 * protected on its annotated {@code Mono} handler; which beans appear and when.
 */
class IdempotencyWebFluxAutoConfigurationTests {

	private final ReactiveWebApplicationContextRunner runner = new ReactiveWebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(WebFluxAutoConfiguration.class, IdempotencyAutoConfiguration.class,
				IdempotencyMethodAutoConfiguration.class, IdempotencyWebFluxAutoConfiguration.class));

	@Test
	void aFreshWebFluxApplicationReplaysItsMonoHandlersAnswerAndRefusesAnotherBody() {
		SpringApplication application = new SpringApplication(OrdersApplication.class);
		application.setWebApplicationType(WebApplicationType.REACTIVE);
		application.setDefaultProperties(Map.of("server.port", "0"));
		try (ConfigurableApplicationContext context = application.run()) {
			int port = ((WebServerApplicationContext) context).getWebServer().getPort();
			WebTestClient client = WebTestClient.bindToServer()
				.baseUrl("http://127.0.0.1:" + port)
				.responseTimeout(Duration.ofSeconds(30))
				.build();
			String key = TestKeys.newKey();
			byte[] first = order(client, key, "book").expectStatus()
				.isCreated()
				.expectHeader()
				.doesNotExist("Idempotent-Replayed")
				.expectBody()
				.returnResult()
				.getResponseBody();
			order(client, key, "book").expectStatus()
				.isCreated()
				.expectHeader()
				.valueEquals("Idempotent-Replayed", "true")
				.expectHeader()
				.valueEquals("Location", "/orders/1")
				.expectBody()
				.consumeWith((replay) -> assertThat(replay.getResponseBody()).isEqualTo(first));
			order(client, key, "pen").expectStatus()
				.isEqualTo(422)
				.expectHeader()
				.contentType("application/problem+json")
				.expectBody()
				.returnResult();
			assertThat(context.getBean(OrderController.class).created.get()).isEqualTo(1);
		}
	}

	private static WebTestClient.ResponseSpec order(WebTestClient client, String key, String item) {
		return client.post()
			.uri("/orders")
			.contentType(MediaType.APPLICATION_JSON)
			.header("Idempotency-Key", key)
			.bodyValue("{\"item\":\"" + item + "\"}")
			.exchange();
	}

	@Test
	void theDoorIsAWebFilterWithAReplaceableScopeResolver() {
		this.runner.run((context) -> assertThat(context).hasNotFailed()
			.hasSingleBean(ServerIdempotencyScopeResolver.class)
			.hasBean("idempotencyWebFilter")
			.getBean("idempotencyWebFilter")
			.isInstanceOf(WebFilter.class));
		this.runner.withBean(ServerIdempotencyScopeResolver.class, () -> (exchange) -> Mono.just("tenant"))
			.run((context) -> assertThat(context.getBean(ServerIdempotencyScopeResolver.class))
				.isNotInstanceOf(ServerPrincipalScopeResolver.class));
	}

	@Test
	void withTheStarterTurnedOffThereIsNoDoor() {
		this.runner.withPropertyValues("idempotency.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean("idempotencyWebFilter"));
	}

	@Test
	void aKeyedHandlerReturningAMonoIsRefusedByTheMethodDoor() {
		this.runner.withUserConfiguration(KeyedMonoController.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("KeyedMonoController.place")
				.hasMessageContaining("whose result comes after the call");
		});
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration(
			excludeName = "org.springframework.boot.liquibase.autoconfigure.LiquibaseAutoConfiguration")
	@Import(OrderController.class)
	static class OrdersApplication {

	}

	@RestController
	static class OrderController {

		final AtomicInteger created = new AtomicInteger();

		@PostMapping("/orders")
		@Idempotent
		Mono<ResponseEntity<Map<String, Object>>> create(@RequestBody Map<String, Object> order) {
			return Mono.fromSupplier(() -> {
				int id = this.created.incrementAndGet();
				return ResponseEntity.created(java.net.URI.create("/orders/" + id))
					.body(Map.of("id", id, "item", order.get("item")));
			});
		}

	}

	@RestController
	public static class KeyedMonoController {

		@PostMapping("/places/{id}")
		@Idempotent(key = "#id")
		public Mono<String> place(@PathVariable String id) {
			return Mono.just(id);
		}

	}

}
