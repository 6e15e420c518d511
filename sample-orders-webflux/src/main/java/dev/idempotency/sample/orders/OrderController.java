package dev.idempotency.sample.orders;

import java.net.URI;

import dev.idempotency.Idempotent;
import reactor.core.publisher.Mono;

import org.springframework.http.ResponseEntity;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * Orders, through R2DBC. Creating one is {@link Idempotent}: a retry with the same key
 * and body gets the first answer again, the insert runs once.
 */
@RestController
class OrderController {

	private final DatabaseClient database;

	OrderController(DatabaseClient database) {
		this.database = database;
	}

	@PostMapping("/orders")
	@Idempotent
	Mono<ResponseEntity<Order>> create(@RequestBody NewOrder order) {
		return this.database.sql("INSERT INTO orders (item, quantity) VALUES (:item, :quantity)")
			.bind("item", order.item())
			.bind("quantity", order.quantity())
			.filter((statement) -> statement.returnGeneratedValues("id"))
			.map((row) -> row.get("id", Long.class))
			.one()
			.map((id) -> new Order(id, order.item(), order.quantity()))
			.map((created) -> ResponseEntity.created(URI.create("/orders/" + created.id())).body(created));
	}

	@GetMapping("/orders/{id}")
	Mono<ResponseEntity<Order>> find(@PathVariable long id) {
		return this.database.sql("SELECT id, item, quantity FROM orders WHERE id = :id")
			.bind("id", id)
			.map((row) -> new Order(row.get("id", Long.class), row.get("item", String.class),
					row.get("quantity", Integer.class)))
			.one()
			.map(ResponseEntity::ok)
			.defaultIfEmpty(ResponseEntity.notFound().build());
	}

	record NewOrder(String item, int quantity) {
	}

	record Order(Long id, String item, Integer quantity) {
	}

}
