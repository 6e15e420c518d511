package dev.idempotency.sample.orders;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A reactive orders service: WebFlux over R2DBC, its orders and its idempotency records
 * in the same database ({@code idempotency.store.type=r2dbc}). {@code POST /orders} with
 * an {@code Idempotency-Key} creates an order once, however often a client sends it.
 */
@SpringBootApplication
public class OrdersApplication {

	public static void main(String[] args) {
		SpringApplication.run(OrdersApplication.class, args);
	}

}
