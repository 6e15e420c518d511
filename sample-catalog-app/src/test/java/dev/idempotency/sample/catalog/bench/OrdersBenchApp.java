package dev.idempotency.sample.catalog.bench;

import java.net.URI;
import java.util.concurrent.atomic.AtomicLong;

import dev.idempotency.Idempotent;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.annotation.Import;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * The README's quick-start application, for the load script {@code bench/light-wrk.py}:
 * {@code POST /orders} answers from memory (tens of µs of CPU), {@code POST /orders/db}
 * inserts one row into PostgreSQL first. Both are {@code @Idempotent}: a request with an
 * {@code Idempotency-Key} header is protected, one without runs unprotected, so the
 * script compares the two on the same endpoint. Runs in its own JVM, configured by
 * command-line properties; {@code spring.config.name} keeps the catalog's
 * {@code application.yaml} out.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import(OrdersBenchApp.OrderController.class)
public class OrdersBenchApp {

	public static void main(String[] args) {
		new SpringApplicationBuilder(OrdersBenchApp.class).properties("spring.config.name=orders-bench").run(args);
	}

	record NewOrder(String item, int quantity) {
	}

	record Order(long id, String item, int quantity) {
	}

	@RestController
	static class OrderController {

		private final AtomicLong ids = new AtomicLong();

		private final JdbcClient jdbc;

		OrderController(JdbcClient jdbc) {
			this.jdbc = jdbc;
		}

		@PostMapping("/orders")
		@Idempotent
		ResponseEntity<Order> create(@RequestBody NewOrder order) {
			Order created = new Order(this.ids.incrementAndGet(), order.item(), order.quantity());
			return ResponseEntity.created(URI.create("/orders/" + created.id())).body(created);
		}

		@PostMapping("/orders/db")
		@Idempotent
		ResponseEntity<Order> createStored(@RequestBody NewOrder order) {
			long id = this.jdbc.sql("INSERT INTO light_order (item, quantity) VALUES (?, ?) RETURNING id")
				.param(order.item())
				.param(order.quantity())
				.query(Long.class)
				.single();
			Order created = new Order(id, order.item(), order.quantity());
			return ResponseEntity.created(URI.create("/orders/" + created.id())).body(created);
		}

	}

}
