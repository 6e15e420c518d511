package dev.idempotency.web;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

import dev.idempotency.Idempotent;
import dev.idempotency.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempotency.autoconfigure.r2dbc.IdempotencyR2dbcStoreAutoConfiguration;
import dev.idempotency.method.IdempotencyMethodAutoConfiguration;
import dev.idempotency.test.TestKeys;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.publisher.Mono;

import org.springframework.aop.support.AopUtils;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.r2dbc.autoconfigure.R2dbcAutoConfiguration;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.boot.webflux.autoconfigure.WebFluxAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.server.WebFilter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * A WebFlux application with the starter: a fresh one, as the README makes it, is
 * protected on its annotated {@code Mono} handler; which beans appear and when.
 */
@ExtendWith(OutputCaptureExtension.class)
class IdempotencyWebFluxAutoConfigurationTests {

	private final ReactiveWebApplicationContextRunner runner = new ReactiveWebApplicationContextRunner()
		.withConfiguration(AutoConfigurations.of(WebFluxAutoConfiguration.class, IdempotencyAutoConfiguration.class,
				IdempotencyMethodAutoConfiguration.class, IdempotencyWebFluxAutoConfiguration.class));

	/**
	 * With the R2DBC store the door runs protected handlers in a reactive transaction
	 * that holds their record (atomic completion), unless
	 * {@code idempotency.store.r2dbc.transactional-completion} is off; with another store
	 * it has none to run them in.
	 */
	@Test
	void atomicCompletionIsOnWithTheR2dbcStoreUnlessTurnedOff() {
		ReactiveWebApplicationContextRunner r2dbc = this.runner
			.withConfiguration(
					AutoConfigurations.of(R2dbcAutoConfiguration.class, IdempotencyR2dbcStoreAutoConfiguration.class))
			.withPropertyValues("idempotency.store.type=r2dbc", "spring.r2dbc.url=r2dbc:h2:mem:///atomic_"
					+ UUID.randomUUID().toString().replace("-", "") + "?DB_CLOSE_DELAY=-1");
		r2dbc.run((context) -> assertThat(context).hasNotFailed()
			.getBean(WebFluxDoor.class)
			.extracting("transactions")
			.isInstanceOf(ReactiveHandlerTransactions.class));
		r2dbc.withPropertyValues("idempotency.store.r2dbc.transactional-completion=false")
			.run((context) -> assertThat(context).hasNotFailed()
				.getBean(WebFluxDoor.class)
				.extracting("transactions")
				.isNull());
		this.runner.run((context) -> assertThat(context).hasNotFailed()
			.getBean(WebFluxDoor.class)
			.extracting("transactions")
			.isNull());
	}

	/**
	 * The JDBC store's atomic completion (on by default) cannot hold on WebFlux: the
	 * start-up says so once, naming the R2DBC store, unless it is turned off.
	 */
	@Test
	void theJdbcStoresAtomicCompletionIsSaidNotToApplyOnWebFlux(CapturedOutput output) {
		ReactiveWebApplicationContextRunner jdbc = this.runner
			.withConfiguration(
					AutoConfigurations.of(org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration.class,
							dev.idempotency.autoconfigure.jdbc.IdempotencyJdbcStoreAutoConfiguration.class))
			.withPropertyValues("idempotency.store.type=jdbc", "spring.datasource.url=jdbc:h2:mem:webflux_"
					+ UUID.randomUUID().toString().replace("-", "") + ";DB_CLOSE_DELAY=-1");
		jdbc.run((context) -> assertThat(context).hasNotFailed());
		assertThat(output)
			.contains("atomic completion (idempotency.store.jdbc.transactional-completion) does not"
					+ " apply on WebFlux")
			.contains("idempotency.store.type=r2dbc");
		int said = output.toString().split("does not apply on WebFlux", -1).length - 1;
		jdbc.withPropertyValues("idempotency.store.jdbc.transactional-completion=false")
			.run((context) -> assertThat(context).hasNotFailed());
		assertThat(output.toString().split("does not apply on WebFlux", -1).length - 1).as("not said when off")
			.isEqualTo(said);
	}

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

	/**
	 * A refusal of the method door that leaves a WebFlux handler is answered with its own
	 * status and problem body, not Boot's {@code 500}.
	 */
	@Test
	void aRefusalOfTheMethodDoorInAWebFluxHandlerIsAnsweredWithItsOwnStatus() {
		SpringApplication application = new SpringApplication(ChargesApplication.class);
		application.setWebApplicationType(WebApplicationType.REACTIVE);
		application.setDefaultProperties(Map.of("server.port", "0"));
		try (ConfigurableApplicationContext context = application.run()) {
			int port = ((WebServerApplicationContext) context).getWebServer().getPort();
			WebTestClient client = WebTestClient.bindToServer()
				.baseUrl("http://127.0.0.1:" + port)
				.responseTimeout(Duration.ofSeconds(30))
				.build();
			String id = "ch-" + TestKeys.newKey();
			client.post().uri("/charges/" + id + "?amount=5").exchange().expectStatus().isOk();
			client.post()
				.uri("/charges/" + id + "?amount=6")
				.exchange()
				.expectStatus()
				.isEqualTo(422)
				.expectHeader()
				.contentType("application/problem+json")
				.expectBody()
				.jsonPath("$.type")
				.value((type) -> assertThat(type.toString()).endsWith("/key-reused"));
			client.post()
				.uri("/charges/" + "x".repeat(300) + "?amount=5")
				.exchange()
				.expectStatus()
				.isEqualTo(400)
				.expectHeader()
				.contentType("application/problem+json");
			assertThat(context.getBean(Charges.class).charged()).isEqualTo(1);
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
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean("idempotencyWebFilter")
				.doesNotHaveBean(IdempotencyHandlerFilterFunction.class));
	}

	@Test
	void aFunctionalRouteGetsTheFilterFunctionBean() {
		this.runner.withUserConfiguration(FilteredRoutes.class)
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(IdempotencyHandlerFilterFunction.class)
				.hasBean("orderRoutes"));
	}

	/**
	 * Nothing silently unprotected: a filtered route whose store cannot be made fails the
	 * start-up with the same report as an annotated handler's application.
	 */
	@Test
	void aFilteredRouteWithoutItsStoreFailsTheStartUpWithTheStoreReport(CapturedOutput output) {
		SpringApplication application = new SpringApplication(FilteredRoutesApplication.class);
		application.setWebApplicationType(WebApplicationType.REACTIVE);
		// A JDBC store without a DataSource.
		application.setDefaultProperties(
				Map.of("server.port", "0", "idempotency.store.type", "jdbc", "spring.autoconfigure.exclude",
						"org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration"));
		assertThatException().isThrownBy(application::run);
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("idempotency.store.type=jdbc but no IdempotencyStore bean exists")
			.contains("Action:\n\nAdd spring-boot-starter-jdbc and a DataSource");
	}

	/**
	 * With the starter turned off there is no filter: a route that requires it fails the
	 * start-up, naming the filter, instead of running unprotected.
	 */
	@Test
	void withTheStarterTurnedOffARouteThatRequiresTheFilterFailsTheStartUp() {
		this.runner.withPropertyValues("idempotency.enabled=false")
			.withUserConfiguration(FilteredRoutes.class)
			.run((context) -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining(IdempotencyHandlerFilterFunction.class.getName()));
	}

	/**
	 * A handler with a key expression is the method door's, which now protects a
	 * {@code Mono} (it refused one at start-up before).
	 */
	@Test
	void aKeyedHandlerReturningAMonoIsProtectedByTheMethodDoor() {
		this.runner.withUserConfiguration(KeyedMonoController.class).run((context) -> {
			assertThat(context).hasNotFailed();
			assertThat(AopUtils.isAopProxy(context.getBean(KeyedMonoController.class))).isTrue();
		});
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration(
			excludeName = "org.springframework.boot.liquibase.autoconfigure.LiquibaseAutoConfiguration")
	@Import(OrderController.class)
	static class OrdersApplication {

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration(
			excludeName = "org.springframework.boot.liquibase.autoconfigure.LiquibaseAutoConfiguration")
	@Import(FilteredRoutes.class)
	static class FilteredRoutesApplication {

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration(
			excludeName = "org.springframework.boot.liquibase.autoconfigure.LiquibaseAutoConfiguration")
	@Import({ Charges.class, ChargeController.class })
	static class ChargesApplication {

	}

	public static class Charges {

		private final AtomicInteger charged = new AtomicInteger();

		public int charged() {
			return this.charged.get();
		}

		@Idempotent(key = "#id")
		public Mono<String> charge(String id, int amount) {
			return Mono.fromSupplier(() -> "charged " + amount + " #" + this.charged.incrementAndGet());
		}

	}

	@RestController
	static class ChargeController {

		private final Charges charges;

		ChargeController(Charges charges) {
			this.charges = charges;
		}

		@PostMapping("/charges/{id}")
		Mono<String> charge(@PathVariable String id, @RequestParam int amount) {
			return this.charges.charge(id, amount);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class FilteredRoutes {

		@Bean
		RouterFunction<ServerResponse> orderRoutes(IdempotencyHandlerFilterFunction idempotency) {
			return RouterFunctions.route()
				.POST("/orders", (request) -> ServerResponse.ok().bodyValue("ordered"))
				.filter(idempotency)
				.build();
		}

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
