package dev.idempotency.store.seal;

import java.net.URI;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import dev.idempotency.Idempotent;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * An app whose protected handler puts what the request holds into its answer (body and
 * {@code Location}), and counts its runs per holder.
 */
@SpringBootConfiguration
@EnableAutoConfiguration(excludeName = "org.springframework.boot.liquibase.autoconfigure.LiquibaseAutoConfiguration")
class SealingTestApplication {

	@Bean
	MeterRegistry meterRegistry() {
		return new SimpleMeterRegistry();
	}

	@RestController
	static class Receipts {

		private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

		int runs(String holder) {
			AtomicInteger count = this.runs.get(holder);
			return (count != null) ? count.get() : 0;
		}

		/**
		 * Answers 201 with the holder in the body and in {@code Location}: a small answer
		 * (under 256 bytes), which the store would keep without deflating it.
		 */
		@PostMapping("/receipts")
		@Idempotent
		ResponseEntity<Map<String, Object>> create(@RequestBody Map<String, String> request) {
			String holder = request.getOrDefault("holder", "nobody");
			int run = this.runs.computeIfAbsent(holder, (h) -> new AtomicInteger()).incrementAndGet();
			return ResponseEntity.created(URI.create("/receipts/" + holder)).body(Map.of("holder", holder, "run", run));
		}

	}

}
