package dev.idempotency.actuate;

import java.util.Map;

import dev.idempotency.Idempotent;
import dev.idempotency.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempotency.autoconfigure.IdempotencyEndpointAutoConfiguration;
import dev.idempotency.web.IdempotencyWebMvcAutoConfiguration;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.endpoint.jackson.JacksonEndpointAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.endpoint.web.WebEndpointAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.env.EnvironmentEndpointAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.web.server.ManagementContextAutoConfiguration;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.autoconfigure.context.PropertyPlaceholderAutoConfiguration;
import org.springframework.boot.health.autoconfigure.actuate.endpoint.HealthEndpointAutoConfiguration;
import org.springframework.boot.health.autoconfigure.registry.HealthContributorRegistryAutoConfiguration;
import org.springframework.boot.http.converter.autoconfigure.HttpMessageConvertersAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.servlet.autoconfigure.actuate.web.ServletManagementContextAutoConfiguration;
import org.springframework.boot.tomcat.autoconfigure.servlet.TomcatServletWebServerAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.DispatcherServletAutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * A web application with the idempotency endpoint and no more of Boot than it needs (so
 * that processing it ahead of time and compiling what that generates stays short), for
 * {@link IdempotencyEndpointAotTests}: its own handler keeps every key in flight, and
 * Boot's {@code env} endpoint stands for Boot's own endpoints.
 */
@SpringBootConfiguration
@ImportAutoConfiguration({ PropertyPlaceholderAutoConfiguration.class, TomcatServletWebServerAutoConfiguration.class,
		DispatcherServletAutoConfiguration.class, WebMvcAutoConfiguration.class,
		HttpMessageConvertersAutoConfiguration.class, JacksonAutoConfiguration.class, EndpointAutoConfiguration.class,
		JacksonEndpointAutoConfiguration.class, WebEndpointAutoConfiguration.class,
		ManagementContextAutoConfiguration.class, ServletManagementContextAutoConfiguration.class,
		HealthContributorRegistryAutoConfiguration.class, HealthEndpointAutoConfiguration.class,
		EnvironmentEndpointAutoConfiguration.class, IdempotencyAutoConfiguration.class,
		IdempotencyWebMvcAutoConfiguration.class, IdempotencyEndpointAutoConfiguration.class })
class AotEndpointApplication {

	public static void main(String[] args) {
		SpringApplication.run(AotEndpointApplication.class, args);
	}

	@RestController
	static class Orders {

		/** Never answers while the test runs: its key stays in flight. */
		@PostMapping("/orders")
		@Idempotent
		Map<String, Object> create() throws InterruptedException {
			Thread.sleep(60_000);
			return Map.of();
		}

	}

}
