package dev.idempotency.method;

import java.security.Principal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;

import dev.idempotency.IdempotencyRejectedException;
import dev.idempotency.Idempotent;
import dev.idempotency.NonBlockingThreads;
import dev.idempotency.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempotency.autoconfigure.redis.IdempotencyRedisStoreAutoConfiguration;
import dev.idempotency.core.IdempotencyErrorType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.context.Context;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.mock.http.server.reactive.MockServerHttpRequest;
import org.springframework.mock.web.server.MockServerWebExchange;
import org.springframework.web.filter.reactive.ServerWebExchangeContextFilter;
import org.springframework.web.server.ServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The method door on methods returning a {@code Mono} or a {@code Flux}, on the in-memory
 * store (subclasses: other stores). Every call is subscribed on Reactor's parallel
 * scheduler, whose threads must not block: blocking calls there are watched
 * ({@link NonBlockingThreads}), so a blocking store call that the door did not move off
 * the subscriber's thread fails the test.
 */
@SpringBootTest(classes = ReactiveMethodDoorTests.Application.class,
		webEnvironment = SpringBootTest.WebEnvironment.NONE,
		properties = { "idempotency.lease=3s", "idempotency.heartbeat-interval=1s", "idempotency.in-flight.wait=1s",
				"idempotency.store.redis.command-timeout=1s", "idempotency.response.max-body-size=1KB" })
@ExtendWith(NonBlockingThreads.class)
class ReactiveMethodDoorTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(20);

	@Autowired
	private Payments payments;

	@Test
	void blockingOnANonBlockingThreadIsDetectedHere() {
		NonBlockingThreads.assertBlockingIsDetected();
	}

	@AfterEach
	void nothingBlocked() {
		NonBlockingThreads.assertNoneBlocked();
	}

	@Test
	void theCallIsProtectedWhenSubscribedAndASecondSubscriptionIsReplayed() {
		String key = key();
		Mono<Receipt> pay = this.payments.pay(key, 250);
		assertThat(this.payments.invocations(key)).as("nothing runs before the Mono is subscribed").isZero();
		Receipt first = subscribe(pay);
		Receipt again = subscribe(pay);
		Receipt third = subscribe(this.payments.pay(key, 250));
		assertThat(again).isEqualTo(first);
		assertThat(third).isEqualTo(first);
		assertThat(this.payments.invocations(key)).as("the method runs once").isEqualTo(1);
	}

	@Test
	void theSameKeyWithAnotherArgumentIsRefusedAsReused() {
		String key = key();
		subscribe(this.payments.pay(key, 100));
		assertThatExceptionOfType(IdempotencyRejectedException.class)
			.isThrownBy(() -> subscribe(this.payments.pay(key, 999)))
			.satisfies((ex) -> assertThat(ex.error().type()).isEqualTo(IdempotencyErrorType.KEY_REUSED))
			.satisfies((ex) -> assertThat(ex.error().status()).isEqualTo(422));
		assertThat(this.payments.invocations(key)).isEqualTo(1);
	}

	@Test
	void concurrentSubscribersOfOneKeyRunItOnce() throws Exception {
		String key = key();
		int threads = 32;
		CountDownLatch start = new CountDownLatch(1);
		ExecutorService pool = Executors.newFixedThreadPool(threads);
		try {
			List<Future<Receipt>> results = new ArrayList<>();
			IntStream.range(0, threads).forEach((i) -> results.add(pool.submit(() -> {
				start.await();
				return subscribe(this.payments.slowly(key, 300));
			})));
			start.countDown();
			List<Receipt> receipts = new ArrayList<>();
			for (Future<Receipt> result : results) {
				receipts.add(result.get(30, TimeUnit.SECONDS));
			}
			assertThat(receipts).hasSize(threads).containsOnly(receipts.get(0));
			assertThat(this.payments.invocations(key)).isEqualTo(1);
		}
		finally {
			pool.shutdownNow();
		}
	}

	/**
	 * A Flux of {@code Object} whose elements plain JSON would give back as other classes
	 * (a {@code Long} as an {@code Integer}, a {@code BigDecimal} as a {@code Double}) is
	 * replayed with its elements' own classes. Before, the retry was replayed
	 * {@code [5, 1.5]} as an {@code Integer} and a {@code Double}.
	 */
	@Test
	void aFluxOfObjectIsReplayedWithItsElementsOwnClasses() {
		String key = key();
		List<Object> first = this.payments.amounts(key).collectList().block(TIMEOUT);
		List<Object> again = this.payments.amounts(key).collectList().block(TIMEOUT);
		assertThat(first).containsExactly(5L, new java.math.BigDecimal("1.50"));
		assertThat(again).isEqualTo(first);
		assertThat(again).extracting(Object::getClass).containsExactly(Long.class, java.math.BigDecimal.class);
		assertThat(this.payments.invocations(key)).isEqualTo(1);
	}

	/**
	 * A key expression that fails (a property of a null argument) fails the returned
	 * publisher when subscribed, as the call would, not the method call itself: a caller
	 * composing publishers gets it as an error signal.
	 */
	@Test
	void aKeyExpressionThatFailsIsThePublishersError() {
		Mono<String> call = this.payments.byCommand(null);
		assertThatExceptionOfType(org.springframework.expression.spel.SpelEvaluationException.class)
			.isThrownBy(() -> subscribe(call));
	}

	@Test
	void anErrorReleasesTheKeySoARetryRunsAgain() {
		String key = key();
		assertThatIllegalStateException().isThrownBy(() -> subscribe(this.payments.failing(key)))
			.withMessage("declined");
		assertThatIllegalStateException().isThrownBy(() -> subscribe(this.payments.failing(key)))
			.withMessage("declined");
		assertThat(this.payments.invocations(key)).isEqualTo(2);
	}

	@Test
	void anEmptyMonoIsRecordedAndReplayedEmpty() {
		String key = key();
		assertThat(this.payments.nothing(key).subscribeOn(Schedulers.parallel()).hasElement().block(TIMEOUT)).isFalse();
		assertThat(this.payments.nothing(key).subscribeOn(Schedulers.parallel()).hasElement().block(TIMEOUT)).isFalse();
		assertThat(this.payments.invocations(key)).isEqualTo(1);
	}

	@Test
	void aCancelLeavesTheKeyInFlightUntilTheLeaseRunsOut() throws InterruptedException {
		String key = key();
		Disposable running = this.payments.slowly(key, 10_000).subscribeOn(Schedulers.parallel()).subscribe();
		long deadline = System.nanoTime() + TIMEOUT.toNanos();
		while (this.payments.invocations(key) == 0 && System.nanoTime() < deadline) {
			Thread.sleep(10);
		}
		assertThat(this.payments.invocations(key)).isEqualTo(1);
		running.dispose();
		long cancelled = System.nanoTime();
		assertThatExceptionOfType(IdempotencyRejectedException.class)
			.isThrownBy(() -> subscribe(this.payments.slowly(key, 10)))
			.satisfies((ex) -> assertThat(ex.error().type()).isEqualTo(IdempotencyErrorType.REQUEST_IN_FLIGHT));
		assertThat(this.payments.invocations(key)).as("not run beside the cancelled call").isEqualTo(1);
		// The lease (3s) has run out: the retry takes the key over.
		Thread.sleep(Math.max(0, Duration.ofMillis(3500).toMillis() - (System.nanoTime() - cancelled) / 1_000_000));
		Receipt retried = subscribe(this.payments.slowly(key, 10));
		assertThat(retried.key()).isEqualTo(key);
		assertThat(this.payments.invocations(key)).isEqualTo(2);
	}

	@Test
	void aFluxIsCollectedAndItsElementsReplayed() {
		String key = key();
		List<Receipt> first = this.payments.batch(key, 3)
			.subscribeOn(Schedulers.parallel())
			.collectList()
			.block(TIMEOUT);
		List<Receipt> again = this.payments.batch(key, 3)
			.subscribeOn(Schedulers.parallel())
			.collectList()
			.block(TIMEOUT);
		assertThat(first).hasSize(3).allSatisfy((receipt) -> assertThat(receipt).isInstanceOf(Receipt.class));
		assertThat(again).isEqualTo(first);
		assertThat(this.payments.invocations(key)).isEqualTo(1);
	}

	@Test
	void aFluxOverTheAnswerBoundIsDeliveredWholeButNotStored() {
		String key = key();
		// 40 receipts are far more than the 1KB bound.
		List<Receipt> first = this.payments.batch(key, 40)
			.subscribeOn(Schedulers.parallel())
			.collectList()
			.block(TIMEOUT);
		List<Receipt> again = this.payments.batch(key, 40)
			.subscribeOn(Schedulers.parallel())
			.collectList()
			.block(TIMEOUT);
		assertThat(first).hasSize(40);
		assertThat(again).hasSize(40).doesNotContainAnyElementsOf(first);
		assertThat(this.payments.invocations(key)).as("not stored: the retry ran again").isEqualTo(2);
	}

	@Test
	void insideAWebFluxRequestWhoseExchangeIsInTheContextTheKeyBelongsToItsPrincipal() {
		String key = key();
		Receipt alice = subscribe(this.payments.pay(key, 5).contextWrite(exchangeOf("alice")));
		assertThat(subscribe(this.payments.pay(key, 5).contextWrite(exchangeOf("alice")))).isEqualTo(alice);
		Receipt bob = subscribe(this.payments.pay(key, 5).contextWrite(exchangeOf("bob")));
		assertThat(bob).as("another principal's key").isNotEqualTo(alice);
		assertThat(this.payments.invocations(key)).isEqualTo(2);
	}

	/**
	 * The Reactor context of a WebFlux request with Spring's
	 * ServerWebExchangeContextFilter.
	 */
	private static Context exchangeOf(String user) {
		Principal principal = () -> user;
		ServerWebExchange exchange = MockServerWebExchange.from(MockServerHttpRequest.post("/payments"))
			.mutate()
			.principal(Mono.just(principal))
			.build();
		return Context.of(ServerWebExchangeContextFilter.EXCHANGE_CONTEXT_ATTRIBUTE, exchange);
	}

	private static <T> T subscribe(Mono<T> mono) {
		return mono.subscribeOn(Schedulers.parallel()).block(TIMEOUT);
	}

	private static String key() {
		return "reactive-" + UUID.randomUUID();
	}

	/** A receipt, its id random (without SecureRandom, which blocks). */
	public record Receipt(String key, int amount, long id) {
	}

	public record Command(String id) {
	}

	public static class Payments {

		private final java.util.Map<String, AtomicInteger> invocations = new java.util.concurrent.ConcurrentHashMap<>();

		int invocations(String key) {
			AtomicInteger count = this.invocations.get(key);
			return (count != null) ? count.get() : 0;
		}

		private void invoked(String key) {
			this.invocations.computeIfAbsent(key, (k) -> new AtomicInteger()).incrementAndGet();
		}

		@Idempotent(key = "#key")
		public Mono<Receipt> pay(String key, int amount) {
			invoked(key);
			return Mono.fromSupplier(() -> new Receipt(key, amount, ThreadLocalRandom.current().nextLong()));
		}

		@Idempotent(key = "#key", fingerprint = "#key")
		public Mono<Receipt> slowly(String key, long millis) {
			invoked(key);
			return Mono.delay(Duration.ofMillis(millis))
				.map((tick) -> new Receipt(key, 1, ThreadLocalRandom.current().nextLong()));
		}

		@Idempotent(key = "#key")
		public Mono<String> failing(String key) {
			invoked(key);
			return Mono.error(new IllegalStateException("declined"));
		}

		@Idempotent(key = "#key")
		public Mono<Void> nothing(String key) {
			invoked(key);
			return Mono.empty();
		}

		@Idempotent(key = "#command.id")
		public Mono<String> byCommand(Command command) {
			return Mono.just("ran");
		}

		@Idempotent(key = "#key")
		public Flux<Object> amounts(String key) {
			invoked(key);
			return Flux.just(5L, new java.math.BigDecimal("1.50"));
		}

		@Idempotent(key = "#key")
		public Flux<Receipt> batch(String key, int count) {
			invoked(key);
			return Flux.range(0, count).map((i) -> new Receipt(key, i, ThreadLocalRandom.current().nextLong()));
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ AopAutoConfiguration.class, DataRedisAutoConfiguration.class,
			IdempotencyAutoConfiguration.class, IdempotencyRedisStoreAutoConfiguration.class,
			IdempotencyMethodAutoConfiguration.class })
	static class Application {

		@Bean
		Payments payments() {
			return new Payments();
		}

	}

}
