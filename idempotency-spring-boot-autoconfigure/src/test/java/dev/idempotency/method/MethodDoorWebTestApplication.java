package dev.idempotency.method;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.idempotency.Idempotent;
import dev.idempotency.core.IdempotencyErrorException;
import dev.idempotency.core.IdempotencyTemplate;
import dev.idempotency.core.IdempotentRequest;
import dev.idempotency.core.KeyFormat;
import dev.idempotency.core.ResultCodec;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * A small web app whose handlers and services, protected by the method door, count their
 * runs.
 */
@SpringBootConfiguration
@EnableAutoConfiguration(excludeName = "org.springframework.boot.liquibase.autoconfigure.LiquibaseAutoConfiguration")
class MethodDoorWebTestApplication {

	@Bean
	MeterRegistry meterRegistry() {
		return new SimpleMeterRegistry();
	}

	@Bean
	Runs runs() {
		return new Runs();
	}

	@Bean
	Gate gate() {
		return new Gate();
	}

	@Bean
	Payments payments(Runs runs) {
		return new Payments(runs);
	}

	@Bean
	Bookings bookings(Runs runs) {
		return new Bookings(runs);
	}

	/**
	 * A slow keyed service behind a handler that the HTTP door protects with the header.
	 */
	static class Bookings {

		private final CountDownLatch entered = new CountDownLatch(1);

		private final CountDownLatch open = new CountDownLatch(1);

		private final Runs runs;

		Bookings(Runs runs) {
			this.runs = runs;
		}

		@Idempotent(key = "#id")
		public String book(String id) throws InterruptedException {
			this.entered.countDown();
			this.open.await(30, TimeUnit.SECONDS);
			return "booked " + id + " #" + this.runs.increment("book-" + id);
		}

		public boolean awaitEntered() throws InterruptedException {
			return this.entered.await(30, TimeUnit.SECONDS);
		}

		public void open() {
			this.open.countDown();
		}

	}

	/** How often each operation ran, by key. */
	static class Runs {

		private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

		int increment(String name) {
			return this.runs.computeIfAbsent(name, (n) -> new AtomicInteger()).incrementAndGet();
		}

		int of(String name) {
			AtomicInteger count = this.runs.get(name);
			return (count != null) ? count.get() : 0;
		}

	}

	/** Holds a slow handler until the test opens it. */
	static class Gate {

		final CountDownLatch entered = new CountDownLatch(1);

		final CountDownLatch open = new CountDownLatch(1);

		void pass() {
			this.entered.countDown();
			try {
				this.open.await(30, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}

	}

	record NewOrder(String requestId, String item) {
	}

	record Order(String requestId, String item, int run) {
	}

	record Charge(String orderId, int cents) {
	}

	record Receipt(String orderId, int cents, int run) {
	}

	/** A service method behind a handler that the HTTP door does not protect. */
	static class Payments {

		private final Runs runs;

		Payments(Runs runs) {
			this.runs = runs;
		}

		@Idempotent(key = "#charge.orderId")
		public Receipt pay(Charge charge) {
			return new Receipt(charge.orderId(), charge.cents(), this.runs.increment("pay-" + charge.orderId()));
		}

	}

	/** Registered as a member class of this configuration. */
	@RestController
	static class OrderController {

		private final Runs runs;

		private final Payments payments;

		private final Gate gate;

		private final Bookings bookings;

		OrderController(Runs runs, Payments payments, Gate gate, Bookings bookings) {
			this.runs = runs;
			this.payments = payments;
			this.gate = gate;
			this.bookings = bookings;
		}

		@PostMapping("/orders/slow")
		@Idempotent(key = "#command.requestId")
		public Order createSlowly(@RequestBody NewOrder command) {
			this.gate.pass();
			return new Order(command.requestId(), command.item(), this.runs.increment("slow-" + command.requestId()));
		}

		@PostMapping("/orders")
		@Idempotent(key = "#command.requestId")
		public Order create(@RequestBody NewOrder command) {
			return new Order(command.requestId(), command.item(),
					this.runs.increment("create-" + command.requestId() + "-" + command.item()));
		}

		@PostMapping("/orders/strict")
		@Idempotent(key = "#command.requestId", keyRequired = true)
		public Order createStrictly(@RequestBody NewOrder command) {
			return new Order(command.requestId(), command.item(),
					this.runs.increment("strict-" + command.requestId() + "-" + command.item()));
		}

		@PostMapping("/orders/uuid")
		@Idempotent(key = "#command.requestId", keyFormat = KeyFormat.UUID)
		public Order createWithUuid(@RequestBody NewOrder command) {
			return new Order(command.requestId(), command.item(),
					this.runs.increment("uuid-" + command.requestId() + "-" + command.item()));
		}

		@PostMapping("/charges")
		public Receipt charge(@RequestBody Charge charge) {
			return this.payments.pay(charge);
		}

		@PostMapping("/bookings")
		@Idempotent
		public Map<String, String> booking(@RequestBody Map<String, String> booking) throws InterruptedException {
			return Map.of("result", this.bookings.book(booking.get("id")));
		}

		/**
		 * Protected by the HTTP door, and passes its own key on to the keyed service, as
		 * the order.
		 */
		@PostMapping("/charges/under-request-key")
		@Idempotent
		public Receipt chargeUnderRequestKey(@RequestHeader("Idempotency-Key") String key, @RequestBody Charge charge) {
			this.runs.increment("charge-handler-" + key);
			return this.payments.pay(new Charge(key, charge.cents()));
		}

		/** Protected by the HTTP door, in front of a service keyed by the order. */
		@PostMapping("/charges/protected")
		@Idempotent
		public Receipt chargeProtected(@RequestHeader("Idempotency-Key") String key, @RequestBody Charge charge) {
			this.runs.increment("charge-handler-" + key);
			return this.payments.pay(charge);
		}

	}

	/**
	 * Protected by the HTTP door, in front of the programmatic template; answers the
	 * template's refusals with an exception handler of its own.
	 */
	@RestController
	static class LedgerController {

		private final Runs runs;

		private final IdempotencyTemplate template;

		LedgerController(Runs runs, IdempotencyTemplate template) {
			this.runs = runs;
			this.template = template;
		}

		@PostMapping("/ledger")
		@Idempotent
		public String post(@RequestHeader("Idempotency-Key") String key, @RequestParam("entry") String entry,
				@RequestParam("amount") int amount) {
			this.runs.increment("ledger-handler-" + key);
			return this.template.execute(
					IdempotentRequest.of(entry, "Ledger.post",
							Integer.toString(amount).getBytes(StandardCharsets.UTF_8)),
					ResultCodec.utf8(), () -> "posted " + entry + " #" + this.runs.increment("ledger-" + entry));
		}

		@ExceptionHandler(IdempotencyErrorException.class)
		ResponseEntity<String> refused(IdempotencyErrorException ex) {
			return ResponseEntity.status(ex.error().status()).body("refused: " + ex.error().type());
		}

	}

}
