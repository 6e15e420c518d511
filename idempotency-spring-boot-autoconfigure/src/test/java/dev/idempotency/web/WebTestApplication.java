package dev.idempotency.web;

import java.net.URI;
import java.time.Clock;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyRequestAttributes;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.memory.InMemoryIdempotencyStore;
import jakarta.servlet.http.HttpServletRequest;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/** A small app whose handlers count how often they ran. */
@SpringBootConfiguration
@EnableAutoConfiguration(excludeName = "org.springframework.boot.liquibase.autoconfigure.LiquibaseAutoConfiguration")
class WebTestApplication {

	/** The request header whose value is the request's principal, on both stacks. */
	static final String USER_HEADER = "X-User";

	/**
	 * What every test application of the door has, whatever its handlers: the principal
	 * from the {@code X-User} header on both stacks and a store whose connection can be
	 * cut (in memory, or Redis under the test's key prefix).
	 */
	@Configuration(proxyBeanMethods = false)
	static class Infrastructure {

		@Bean
		jakarta.servlet.Filter userHeaderServletFilter() {
			return new org.springframework.web.filter.OncePerRequestFilter() {

				@Override
				protected void doFilterInternal(HttpServletRequest request,
						jakarta.servlet.http.HttpServletResponse response, jakarta.servlet.FilterChain chain)
						throws jakarta.servlet.ServletException, java.io.IOException {
					String user = request.getHeader(USER_HEADER);
					chain.doFilter(
							(user == null) ? request : new jakarta.servlet.http.HttpServletRequestWrapper(request) {

								@Override
								public java.security.Principal getUserPrincipal() {
									return () -> user;
								}

							}, response);
				}

			};
		}

		/**
		 * Before the door, as an authentication filter would be (Spring Security's is at
		 * -100).
		 */
		@Bean
		@org.springframework.core.annotation.Order(org.springframework.core.Ordered.HIGHEST_PRECEDENCE)
		org.springframework.web.server.WebFilter userHeaderWebFilter() {
			return (exchange, chain) -> {
				String user = exchange.getRequest().getHeaders().getFirst(USER_HEADER);
				if (user == null) {
					return chain.filter(exchange);
				}
				java.security.Principal principal = () -> user;
				return chain.filter(exchange.mutate().principal(reactor.core.publisher.Mono.just(principal)).build());
			};
		}

		@Bean
		@org.springframework.boot.autoconfigure.condition.ConditionalOnProperty(name = "idempotency.store.type",
				havingValue = "memory", matchIfMissing = true)
		SwitchableStore idempotencyStore() {
			return new SwitchableStore(InMemoryIdempotencyStore.builder()
				.clock(Clock.systemUTC())
				.maxEntries(10_000)
				.maxSharePerScope(1.0)
				.onFull(InMemoryIdempotencyStore.OnFull.REFUSE)
				.build());
		}

		/**
		 * The Redis store under a key prefix of the test's own, its connection cuttable
		 * too.
		 */
		@Bean
		@org.springframework.boot.autoconfigure.condition.ConditionalOnProperty(name = "idempotency.store.type",
				havingValue = "redis")
		SwitchableStore redisIdempotencyStore(org.springframework.data.redis.connection.RedisConnectionFactory factory,
				org.springframework.core.env.Environment environment) {
			return new SwitchableStore(dev.idempotency.store.redis.RedisIdempotencyStore
				.builder(factory, environment.getRequiredProperty("idempotency.store.redis.key-prefix"))
				.build());
		}

		/**
		 * The R2DBC store on the application's ConnectionFactory, its table made from the
		 * dialect's DDL, its connection cuttable too.
		 */
		@Bean
		@org.springframework.boot.autoconfigure.condition.ConditionalOnProperty(name = "idempotency.store.type",
				havingValue = "r2dbc")
		SwitchableStore r2dbcIdempotencyStore(io.r2dbc.spi.ConnectionFactory factory) {
			dev.idempotency.store.r2dbc.R2dbcIdempotencyStore store = dev.idempotency.store.r2dbc.R2dbcIdempotencyStore
				.builder(factory)
				.build();
			org.springframework.r2dbc.core.DatabaseClient client = org.springframework.r2dbc.core.DatabaseClient
				.create(factory);
			for (String statement : store.dialect().createTable("idempotency_record")) {
				client.sql(statement).then().block(java.time.Duration.ofSeconds(30));
			}
			return new SwitchableStore(store);
		}

	}

	/** How often each endpoint's handler ran, whatever the handlers are. */
	interface Runs {

		/** How often the handler for {@code endpoint} ran. */
		int runs(String endpoint);

		/** Counts one run of the handler for {@code endpoint}, and gives its number. */
		int count(String endpoint);

		void reset();

	}

	/** A store whose connection can be cut, to show the store-failure policy. */
	static class SwitchableStore implements IdempotencyStore {

		private final IdempotencyStore delegate;

		volatile boolean down;

		SwitchableStore(IdempotencyStore delegate) {
			this.delegate = delegate;
		}

		private IdempotencyStore up() {
			if (this.down) {
				throw new dev.idempotency.store.IdempotencyStoreException("connection refused (test)");
			}
			return this.delegate;
		}

		@Override
		public dev.idempotency.store.ReserveResult reserve(dev.idempotency.store.ReserveRequest request) {
			return up().reserve(request);
		}

		/**
		 * The delegate's own asynchronous calls (a non-blocking store is called in place
		 * by the reactive doors), or a refused connection.
		 */
		private <T> java.util.concurrent.CompletionStage<T> upAsync(
				java.util.function.Function<IdempotencyStore, java.util.concurrent.CompletionStage<T>> call) {
			if (this.down) {
				return java.util.concurrent.CompletableFuture
					.failedFuture(new dev.idempotency.store.IdempotencyStoreException("connection refused (test)"));
			}
			return call.apply(this.delegate);
		}

		@Override
		public java.util.concurrent.CompletionStage<dev.idempotency.store.ReserveResult> reserveAsync(
				dev.idempotency.store.ReserveRequest request, java.util.concurrent.Executor executor) {
			return upAsync((store) -> store.reserveAsync(request, executor));
		}

		@Override
		public java.util.concurrent.CompletionStage<Boolean> completeAsync(dev.idempotency.store.RecordId id,
				String ownerToken, dev.idempotency.store.StoredResponse response,
				java.util.concurrent.Executor executor) {
			return upAsync((store) -> store.completeAsync(id, ownerToken, response, executor));
		}

		@Override
		public java.util.concurrent.CompletionStage<Boolean> releaseAsync(dev.idempotency.store.RecordId id,
				String ownerToken, java.util.concurrent.Executor executor) {
			return upAsync((store) -> store.releaseAsync(id, ownerToken, executor));
		}

		@Override
		public java.util.concurrent.CompletionStage<java.util.Optional<dev.idempotency.store.IdempotencyRecord>> recordCompletedAsync(
				dev.idempotency.store.CompletedRecordRequest request, java.util.concurrent.Executor executor) {
			return upAsync((store) -> store.recordCompletedAsync(request, executor));
		}

		@Override
		public java.util.concurrent.CompletionStage<java.util.Optional<dev.idempotency.store.IdempotencyRecord>> findAsync(
				dev.idempotency.store.RecordId id, java.util.concurrent.Executor executor) {
			return upAsync((store) -> store.findAsync(id, executor));
		}

		@Override
		public boolean isBlocking() {
			return this.delegate.isBlocking();
		}

		@Override
		public boolean complete(dev.idempotency.store.RecordId id, String ownerToken,
				dev.idempotency.store.StoredResponse response) {
			return up().complete(id, ownerToken, response);
		}

		@Override
		public java.util.Optional<dev.idempotency.store.IdempotencyRecord> recordCompleted(
				dev.idempotency.store.CompletedRecordRequest request) {
			return up().recordCompleted(request);
		}

		@Override
		public boolean release(dev.idempotency.store.RecordId id, String ownerToken) {
			return up().release(id, ownerToken);
		}

		@Override
		public boolean heartbeat(dev.idempotency.store.RecordId id, String ownerToken, java.time.Duration lease) {
			return up().heartbeat(id, ownerToken, lease);
		}

		@Override
		public java.util.Optional<dev.idempotency.store.IdempotencyRecord> find(dev.idempotency.store.RecordId id) {
			return up().find(id);
		}

		@Override
		public int purgeExpired(int maxRecords) {
			return up().purgeExpired(maxRecords);
		}

		@Override
		public String name() {
			return "switchable";
		}

	}

	@RestController
	static class ThingController implements Runs {

		private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

		/**
		 * How often the handler for {@code endpoint} ran (public: the controller is
		 * proxied).
		 */
		@Override
		public int runs(String endpoint) {
			AtomicInteger count = this.runs.get(endpoint);
			return (count != null) ? count.get() : 0;
		}

		@Override
		public void reset() {
			this.runs.clear();
		}

		@Override
		public int count(String endpoint) {
			return this.runs.computeIfAbsent(endpoint, (e) -> new AtomicInteger()).incrementAndGet();
		}

		@PostMapping("/things")
		@Idempotent
		ResponseEntity<Map<String, Object>> create(@RequestBody Map<String, Object> body) {
			int run = count("create");
			return ResponseEntity.created(URI.create("/things/" + body.get("name")))
				.header("X-Run", Integer.toString(run))
				.body(Map.of("name", body.get("name"), "run", run));
		}

		@GetMapping("/things")
		@Idempotent
		Map<String, Object> list() {
			return Map.of("run", count("list"));
		}

		@PostMapping("/required")
		@Idempotent(keyRequired = true)
		Map<String, Object> required() {
			return Map.of("run", count("required"));
		}

		@PostMapping("/status/{code}")
		@Idempotent
		ResponseEntity<Map<String, Object>> status(@PathVariable int code) {
			int run = count("status-" + code);
			return ResponseEntity.status(code).body(Map.of("run", run));
		}

		@PostMapping("/not-stored")
		@Idempotent
		Map<String, Object> notStored(HttpServletRequest request) {
			int run = count("not-stored");
			request.setAttribute(IdempotencyRequestAttributes.NOT_STORED_REASON, "it reports a passing state");
			return Map.of("run", run);
		}

		@PostMapping("/throw")
		@Idempotent
		Map<String, Object> fail() {
			count("throw");
			throw new IllegalStateException("boom");
		}

		@PostMapping("/handled-failure")
		@Idempotent
		Map<String, Object> handledFailure() {
			count("handled-failure");
			throw new UnsupportedOperationException("handled");
		}

		@ExceptionHandler(UnsupportedOperationException.class)
		ResponseEntity<Map<String, Object>> handle(UnsupportedOperationException ex) {
			return ResponseEntity.status(HttpStatus.INTERNAL_SERVER_ERROR).body(Map.of("error", ex.getMessage()));
		}

		@PostMapping("/slow")
		@Idempotent
		Map<String, Object> slow(@RequestParam long millis) throws InterruptedException {
			int run = count("slow");
			Thread.sleep(millis);
			return Map.of("run", run);
		}

		@PostMapping("/big")
		@Idempotent
		String big(@RequestParam int bytes) {
			count("big");
			return "x".repeat(bytes);
		}

		@PostMapping("/cookie")
		@Idempotent
		ResponseEntity<Map<String, Object>> cookie() {
			int run = count("cookie");
			return ResponseEntity.ok()
				.header("Set-Cookie", "session=secret")
				.header("ETag", "\"v" + run + "\"")
				.body(Map.of("run", run));
		}

		@PostMapping("/pattern/open")
		Map<String, Object> pattern() {
			return Map.of("run", count("pattern"));
		}

		@PostMapping("/unprotected")
		Map<String, Object> unprotected() {
			return Map.of("run", count("unprotected"));
		}

	}

}
