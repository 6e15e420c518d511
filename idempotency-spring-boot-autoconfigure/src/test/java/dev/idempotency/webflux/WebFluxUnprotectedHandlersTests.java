package dev.idempotency.webflux;

import dev.idempotency.Idempotent;
import dev.idempotency.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempotency.method.IdempotencyMethodAutoConfiguration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Mono;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.boot.webflux.autoconfigure.WebFluxAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.function.client.WebClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * A WebFlux application with the starter: an {@code @Idempotent} handler that no door
 * protects fails the start-up, naming it, instead of running on every retry.
 */
@ExtendWith(OutputCaptureExtension.class)
class WebFluxUnprotectedHandlersTests {

	private final ReactiveWebApplicationContextRunner runner = new ReactiveWebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(WebFluxAutoConfiguration.class, IdempotencyAutoConfiguration.class,
				IdempotencyMethodAutoConfiguration.class, IdempotencyWebFluxAutoConfiguration.class));

	@Test
	void aFreshWebFluxApplicationWithAnIdempotentHandlerFailsToStartNamingEachHandler(CapturedOutput output) {
		SpringApplication application = new SpringApplication(OrdersApplication.class);
		application.setWebApplicationType(WebApplicationType.REACTIVE);
		application.setDefaultProperties(java.util.Map.of("server.port", "0"));
		assertThatException().isThrownBy(application::run);
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("Description:\n\nThis is a WebFlux application, and the starter's HTTP door serves Spring MVC"
					+ " only: these @Idempotent handlers would run again on every retry")
			.contains("    " + OrderController.class.getName() + ".create(String) mapped to {POST /orders}\n")
			.contains("    " + AnnotatedController.class.getName() + ".pay(String) mapped to {POST /payments}\n")
			.contains("Action:\n\nRun the application on Spring MVC")
			.doesNotContain(OrderController.class.getName() + ".get(");
	}

	@Test
	void aWebFluxApplicationWithoutIdempotentHandlersStartsAndAnswers() {
		SpringApplication application = new SpringApplication(PlainApplication.class);
		application.setWebApplicationType(WebApplicationType.REACTIVE);
		application.setDefaultProperties(java.util.Map.of("server.port", "0"));
		try (ConfigurableApplicationContext context = application.run()) {
			assertThat(context.getBeanNamesForType(UnprotectedHandlersCheck.class)).hasSize(1);
			int port = ((WebServerApplicationContext) context).getWebServer().getPort();
			String answer = WebClient.create("http://127.0.0.1:" + port)
				.get()
				.uri("/orders/7")
				.retrieve()
				.bodyToMono(String.class)
				.block(java.time.Duration.ofSeconds(10));
			assertThat(answer).isEqualTo("order 7");
		}
	}

	@Test
	void theHandlersAreNamedInTheFailure() {
		this.runner.withUserConfiguration(OrderController.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context).getFailure().isInstanceOf(UnprotectedIdempotentHandlersException.class);
			UnprotectedIdempotentHandlersException failure = (UnprotectedIdempotentHandlersException) context
				.getStartupFailure();
			assertThat(failure.handlers())
				.containsExactly(OrderController.class.getName() + ".create(String) mapped to {POST /orders}");
		});
	}

	@Test
	void withTheStarterTurnedOffTheAnnotationIsTheApplicationsChoice() {
		this.runner.withUserConfiguration(OrderController.class)
			.withPropertyValues("idempotency.enabled=false")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(UnprotectedHandlersCheck.class));
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

	@Test
	void aKeyedHandlerReturningItsResultIsTheMethodDoorsAndStarts() {
		this.runner.withUserConfiguration(KeyedPlainController.class)
			.run((context) -> assertThat(context).hasNotFailed().hasSingleBean(UnprotectedHandlersCheck.class));
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration(
			excludeName = "org.springframework.boot.liquibase.autoconfigure.LiquibaseAutoConfiguration")
	@Import({ OrderController.class, AnnotatedController.class })
	static class OrdersApplication {

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration(
			excludeName = "org.springframework.boot.liquibase.autoconfigure.LiquibaseAutoConfiguration")
	@Import(PlainController.class)
	static class PlainApplication {

	}

	@RestController
	static class OrderController {

		@PostMapping("/orders")
		@Idempotent
		Mono<ResponseEntity<String>> create(@RequestBody String order) {
			return Mono.just(ResponseEntity.status(201).body(order));
		}

		@GetMapping("/orders/{id}")
		Mono<String> get(@PathVariable String id) {
			return Mono.just("order " + id);
		}

	}

	@RestController
	@Idempotent
	static class AnnotatedController {

		@PostMapping("/payments")
		String pay(@RequestBody String payment) {
			return payment;
		}

	}

	@RestController
	static class PlainController {

		@GetMapping("/orders/{id}")
		Mono<String> get(@PathVariable String id) {
			return Mono.just("order " + id);
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

	@RestController
	public static class KeyedPlainController {

		@PostMapping("/places/{id}")
		@Idempotent(key = "#id")
		public String place(@PathVariable String id) {
			return id;
		}

	}

}
