package dev.idempotency.sample.catalog.bench;

import java.net.URI;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;

import com.fasterxml.jackson.annotation.JsonInclude;

import dev.idempotency.Idempotent;
import io.r2dbc.spi.ConnectionFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.autoconfigure.condition.AllNestedConditions;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.autoconfigure.condition.NoneNestedConditions;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.r2dbc.autoconfigure.R2dbcAutoConfiguration;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Import;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * The README's quick-start application, for the load script {@code bench/light-wrk.py}:
 * {@code POST /orders} answers from memory (tens of µs of CPU), {@code POST /orders/db}
 * inserts one row into PostgreSQL first: through {@code JdbcClient}, or, on WebFlux with
 * {@code spring.r2dbc.url} set, through R2DBC ({@code DatabaseClient} on Boot's
 * {@code ConnectionFactory}, the R2DBC store's, so that the insert joins the door's
 * transaction when the store completes atomically); an order's {@code answerBytes} makes
 * the answer that large (order lines), its {@code note} the request. Both are
 * {@code @Idempotent}: a request with an {@code Idempotency-Key} header is protected, one
 * without runs unprotected, so the script compares the two on the same endpoint. Runs in
 * its own JVM, configured by command-line properties; {@code spring.config.name} keeps
 * the catalog's {@code application.yaml} out.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import({ OrdersBenchApp.OrderController.class, OrdersBenchApp.JdbcOrderController.class,
		OrdersBenchApp.R2dbcOrderController.class })
public class OrdersBenchApp {

	public static void main(String[] args) {
		SpringApplicationBuilder application = new SpringApplicationBuilder(OrdersBenchApp.class)
			.properties("spring.config.name=orders-bench");
		if (Arrays.stream(args).noneMatch((arg) -> arg.startsWith("--spring.r2dbc.url="))) {
			// With an R2DBC driver on the class path (-Pbench-r2dbc) Boot would configure
			// a
			// ConnectionFactory, and its DataSource (the JDBC /orders/db's) would back
			// off.
			application.properties("spring.autoconfigure.exclude=" + R2dbcAutoConfiguration.class.getName());
		}
		application.run(args);
	}

	/**
	 * An order; {@code note} is only there to make the request as large as the benchmark
	 * wants, {@code answerBytes} asks for an answer of about that many bytes (order lines
	 * as compressible as real ones), none by default.
	 */
	record NewOrder(String item, int quantity, @Nullable String note, @Nullable Integer answerBytes) {
	}

	record Order(long id, String item, int quantity, @JsonInclude(JsonInclude.Include.NON_EMPTY) List<Line> lines) {

		Order(long id, NewOrder order) {
			this(id, order.item(), order.quantity(),
					Line.about((order.answerBytes() != null) ? order.answerBytes() : 0, id));
		}

	}

	record Line(String sku, String name, double price, int quantity) {

		/** About this many bytes of lines (each about 70 bytes of JSON). */
		static List<Line> about(int bytes, long seed) {
			Random random = new Random(seed);
			List<Line> lines = new ArrayList<>();
			for (int i = 0; i < bytes / 70; i++) {
				lines.add(new Line("SKU-" + (100000 + random.nextInt(900000)), "Item " + random.nextInt(1000),
						random.nextInt(10000) / 100.0, 1 + random.nextInt(9)));
			}
			return lines;
		}

	}

	@RestController
	static class OrderController {

		private final AtomicLong ids = new AtomicLong();

		@PostMapping("/orders")
		@Idempotent
		ResponseEntity<Order> create(@RequestBody NewOrder order) {
			return created(new Order(this.ids.incrementAndGet(), order));
		}

	}

	/** {@code POST /orders/db} through JDBC: Spring MVC, or WebFlux without R2DBC. */
	@RestController
	@Conditional(NotReactiveWithR2dbc.class)
	static class JdbcOrderController {

		private final JdbcClient jdbc;

		JdbcOrderController(JdbcClient jdbc) {
			this.jdbc = jdbc;
		}

		@PostMapping("/orders/db")
		@Idempotent
		ResponseEntity<Order> createStored(@RequestBody NewOrder order) {
			long id = this.jdbc.sql("INSERT INTO light_order (item, quantity) VALUES (?, ?) RETURNING id")
				.param(order.item())
				.param(order.quantity())
				.query(Long.class)
				.single();
			return created(new Order(id, order));
		}

	}

	/**
	 * {@code POST /orders/db} through R2DBC, on WebFlux with {@code spring.r2dbc.url}:
	 * the same insert, on the event loop, through the application's
	 * {@code ConnectionFactory} (a statement of its own, or the door's transaction when
	 * there is one).
	 */
	@RestController
	@Conditional(ReactiveWithR2dbc.class)
	static class R2dbcOrderController {

		private final DatabaseClient db;

		R2dbcOrderController(ConnectionFactory connectionFactory) {
			this.db = DatabaseClient.create(connectionFactory);
		}

		@PostMapping("/orders/db")
		@Idempotent
		Mono<ResponseEntity<Order>> createStored(@RequestBody NewOrder order) {
			return this.db.sql("INSERT INTO light_order (item, quantity) VALUES (:item, :quantity) RETURNING id")
				.bind("item", order.item())
				.bind("quantity", order.quantity())
				.map((row) -> Objects.requireNonNull(row.get("id", Long.class)))
				.one()
				.map((id) -> created(new Order(id, order)));
		}

	}

	private static ResponseEntity<Order> created(Order order) {
		return ResponseEntity.created(URI.create("/orders/" + order.id())).body(order);
	}

	static final class ReactiveWithR2dbc extends AllNestedConditions {

		ReactiveWithR2dbc() {
			super(ConfigurationPhase.PARSE_CONFIGURATION);
		}

		@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
		static class Reactive {

		}

		@ConditionalOnProperty("spring.r2dbc.url")
		static class R2dbcUrl {

		}

	}

	static final class NotReactiveWithR2dbc extends NoneNestedConditions {

		NotReactiveWithR2dbc() {
			super(ConfigurationPhase.PARSE_CONFIGURATION);
		}

		@Conditional(ReactiveWithR2dbc.class)
		static class ReactiveAndR2dbc {

		}

	}

}
