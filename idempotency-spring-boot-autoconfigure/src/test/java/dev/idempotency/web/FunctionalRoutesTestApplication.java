package dev.idempotency.web;

import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import dev.idempotency.IdempotencyRequestAttributes;
import reactor.core.publisher.Mono;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.ServerResponse;

import static org.springframework.web.reactive.function.server.RouterFunctions.route;

/**
 * {@link WebTestApplication}'s endpoints as WebFlux functional routes: the protected ones
 * with {@link IdempotencyHandlerFilterFunction}, none annotated. Their handlers count
 * their runs as the annotated ones do, and none blocks.
 */
@SpringBootConfiguration
@EnableAutoConfiguration(excludeName = "org.springframework.boot.liquibase.autoconfigure.LiquibaseAutoConfiguration")
@Import(WebTestApplication.Infrastructure.class)
class FunctionalRoutesTestApplication {

	private static final ParameterizedTypeReference<Map<String, Object>> JSON = new ParameterizedTypeReference<>() {
	};

	@Bean
	Counts runs() {
		return new Counts();
	}

	/** The protected routes; an error handler added after the filter is inside it. */
	@Bean
	RouterFunction<ServerResponse> protectedRoutes(Counts runs, IdempotencyHandlerFilterFunction idempotency) {
		return route().POST("/things", (request) -> request.bodyToMono(JSON).flatMap((body) -> {
			int run = runs.count("create");
			return ServerResponse.created(URI.create("/things/" + body.get("name")))
				.header("X-Run", Integer.toString(run))
				.bodyValue(Map.of("name", body.get("name"), "run", run));
		})).GET("/things", (request) -> ok(runs, "list")).POST("/status/{code}", (request) -> {
			int code = Integer.parseInt(request.pathVariable("code"));
			return ServerResponse.status(code).bodyValue(Map.of("run", runs.count("status-" + code)));
		}).POST("/throw", (request) -> {
			runs.count("throw");
			return Mono.error(new IllegalStateException("boom"));
		}).POST("/handled-failure", (request) -> {
			runs.count("handled-failure");
			return Mono.error(new UnsupportedOperationException("handled"));
		}).POST("/slow", (request) -> {
			int run = runs.count("slow");
			long millis = Long.parseLong(request.queryParam("millis").orElseThrow());
			return Mono.delay(Duration.ofMillis(millis)).then(ServerResponse.ok().bodyValue(Map.of("run", run)));
		}).POST("/big", (request) -> {
			runs.count("big");
			int bytes = Integer.parseInt(request.queryParam("bytes").orElseThrow());
			return ServerResponse.ok().bodyValue("x".repeat(bytes));
		}).POST("/cookie", (request) -> {
			int run = runs.count("cookie");
			return ServerResponse.ok()
				.header("Set-Cookie", "session=secret")
				.eTag("\"v" + run + "\"")
				.bodyValue(Map.of("run", run));
		}).POST("/exchange/slow", (request) -> {
			int run = runs.count("exchange-slow");
			return Mono.delay(Duration.ofSeconds(2)).then(ServerResponse.ok().bodyValue(Map.of("run", run)));
		}).POST("/exchange/not-stored", (request) -> {
			request.attributes().put(IdempotencyRequestAttributes.NOT_STORED_REASON, "it reports a passing state");
			return ok(runs, "exchange-not-stored");
		})
			// Also under idempotency.web.path-patterns: protected once.
			.POST("/pattern/filtered", (request) -> ok(runs, "pattern-filtered"))
			.POST("/conflict", (request) -> {
				runs.count("conflict");
				return Mono.error(new IllegalArgumentException("taken"));
			})
			.filter(idempotency)
			.onError(UnsupportedOperationException.class,
					(ex, request) -> ServerResponse.status(500).bodyValue(Map.of("error", "handled")))
			.onError(IllegalArgumentException.class,
					(ex, request) -> ServerResponse.status(409).bodyValue(Map.of("error", ex.getMessage())))
			.build()
			.and(route().POST("/required", (request) -> ok(runs, "required"))
				.filter(idempotency.withKeyRequired(true))
				.build());
	}

	/** Routes without the filter: one under a path pattern, one not protected. */
	@Bean
	RouterFunction<ServerResponse> otherRoutes(Counts runs) {
		return route().POST("/pattern/open", (request) -> ok(runs, "pattern"))
			.POST("/unprotected", (request) -> ok(runs, "unprotected"))
			.build();
	}

	private static Mono<ServerResponse> ok(Counts runs, String endpoint) {
		return ServerResponse.ok().bodyValue(Map.of("run", runs.count(endpoint)));
	}

	/** How often each route's handler ran. */
	static class Counts implements WebTestApplication.Runs {

		private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

		@Override
		public int runs(String endpoint) {
			AtomicInteger count = this.runs.get(endpoint);
			return (count != null) ? count.get() : 0;
		}

		@Override
		public int count(String endpoint) {
			return this.runs.computeIfAbsent(endpoint, (e) -> new AtomicInteger()).incrementAndGet();
		}

		@Override
		public void reset() {
			this.runs.clear();
		}

	}

}
