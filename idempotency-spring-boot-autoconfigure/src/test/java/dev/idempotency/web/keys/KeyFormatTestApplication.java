package dev.idempotency.web.keys;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import dev.idempotency.Idempotent;
import dev.idempotency.core.KeyFormat;
import dev.idempotency.web.IdempotencyScopeResolver;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

/**
 * An app whose handlers take keys in each format, on whichever store the test configures;
 * the scope is the {@code X-Tenant} header, so that tests can send one key from two
 * scopes.
 */
@SpringBootConfiguration
@EnableAutoConfiguration(excludeName = "org.springframework.boot.liquibase.autoconfigure.LiquibaseAutoConfiguration")
class KeyFormatTestApplication {

	@Bean
	IdempotencyScopeResolver tenantScopeResolver() {
		return (request) -> {
			String tenant = request.getHeader("X-Tenant");
			return (tenant != null) ? "tenant:" + tenant : "anonymous";
		};
	}

	@RestController
	static class KeyController {

		private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

		int runs(String tenant, String key) {
			AtomicInteger count = this.runs.get(tenant + "\n" + key);
			return (count != null) ? count.get() : 0;
		}

		private Map<String, Object> run(String tenant, String key, String body) {
			int run = this.runs.computeIfAbsent(tenant + "\n" + key, (k) -> new AtomicInteger()).incrementAndGet();
			return Map.of("tenant", tenant, "body", body, "run", run);
		}

		/** The application's key format. */
		@PostMapping("/keys/default")
		@Idempotent
		Map<String, Object> byDefault(@RequestHeader(name = "X-Tenant", defaultValue = "") String tenant,
				@RequestHeader("Idempotency-Key") String key, @RequestBody String body) {
			return run(tenant, key, body);
		}

		@PostMapping("/keys/uuid")
		@Idempotent(keyFormat = KeyFormat.UUID)
		Map<String, Object> uuid(@RequestHeader(name = "X-Tenant", defaultValue = "") String tenant,
				@RequestHeader("Idempotency-Key") String key, @RequestBody String body) {
			return run(tenant, key, body);
		}

		@PostMapping("/keys/uuidv7")
		@Idempotent(keyFormat = KeyFormat.UUID_V7)
		Map<String, Object> uuidV7(@RequestHeader(name = "X-Tenant", defaultValue = "") String tenant,
				@RequestHeader("Idempotency-Key") String key, @RequestBody String body) {
			return run(tenant, key, body);
		}

	}

}
