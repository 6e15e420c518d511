package dev.idempotency.actuate;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.idempotency.Idempotent;
import dev.idempotency.core.KeyFormat;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

/**
 * An app with a protected handler that can be held at a gate, for the endpoint over real
 * HTTP on whichever store the test configures: its keys in the format the test sets
 * ({@code idempotency.key.format}), or UUIDs at {@code /uuid-orders}; a request with an
 * {@code X-User} header is that user's (its principal), so the default scope resolver
 * puts its keys in the scope {@code user:<name>}.
 */
@SpringBootConfiguration
@EnableAutoConfiguration(excludeName = "org.springframework.boot.liquibase.autoconfigure.LiquibaseAutoConfiguration")
class EndpointTestApplication {

	@RestController
	static class Orders {

		private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

		private final Map<String, CountDownLatch> gates = new ConcurrentHashMap<>();

		int runs(String gate) {
			AtomicInteger count = this.runs.get(gate);
			return (count != null) ? count.get() : 0;
		}

		/** Lets the handlers waiting at this gate go on, and every later one. */
		void open(String gate) {
			gate(gate).countDown();
		}

		private CountDownLatch gate(String gate) {
			return this.gates.computeIfAbsent(gate, (g) -> new CountDownLatch(1));
		}

		/** Answers 201 with this run's number, once its gate opens. */
		@PostMapping("/orders")
		@Idempotent
		ResponseEntity<Map<String, Object>> create(@RequestHeader("X-Gate") String gate) throws InterruptedException {
			return run(gate);
		}

		/** The same with UUID keys, whatever the application's format. */
		@PostMapping("/uuid-orders")
		@Idempotent(keyFormat = KeyFormat.UUID_V7)
		ResponseEntity<Map<String, Object>> createWithUuid(@RequestHeader("X-Gate") String gate)
				throws InterruptedException {
			return run(gate);
		}

		private ResponseEntity<Map<String, Object>> run(String gate) throws InterruptedException {
			int run = this.runs.computeIfAbsent(gate, (g) -> new AtomicInteger()).incrementAndGet();
			if (!gate(gate).await(20, TimeUnit.SECONDS)) {
				throw new IllegalStateException("gate " + gate + " never opened");
			}
			return ResponseEntity.status(201).body(Map.of("gate", gate, "run", run));
		}

	}

}
