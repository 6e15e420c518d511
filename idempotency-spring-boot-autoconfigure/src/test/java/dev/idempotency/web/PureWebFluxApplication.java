package dev.idempotency.web;

import java.net.URI;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import dev.idempotency.Idempotent;
import reactor.core.publisher.Mono;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Import;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * A WebFlux application as a user without Spring MVC has it, run in a child JVM whose
 * class path has no servlet API ({@link WebFluxWithoutServletApiTests}).
 */
@SpringBootConfiguration
@EnableAutoConfiguration(excludeName = "org.springframework.boot.liquibase.autoconfigure.LiquibaseAutoConfiguration")
@Import(PureWebFluxApplication.Orders.class)
public class PureWebFluxApplication {

	public static void main(String[] args) {
		SpringApplication application = new SpringApplication(PureWebFluxApplication.class);
		application.setWebApplicationType(WebApplicationType.REACTIVE);
		application.run(args);
	}

	@RestController
	static class Orders {

		private final AtomicInteger created = new AtomicInteger();

		@PostMapping("/orders")
		@Idempotent
		Mono<ResponseEntity<Map<String, Object>>> create(@RequestBody Map<String, Object> order) {
			return Mono.fromSupplier(() -> {
				int id = this.created.incrementAndGet();
				return ResponseEntity.created(URI.create("/orders/" + id)).body(Map.of("id", id));
			});
		}

		@GetMapping("/orders/count")
		Map<String, Object> count() {
			return Map.of("created", this.created.get());
		}

	}

}
