package dev.idempotency.sample.orders;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import dev.idempotency.test.TestKeys;
import org.junit.jupiter.api.Test;
import reactor.blockhound.BlockHound;
import reactor.blockhound.BlockingOperationError;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.MediaType;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * What a client of the reactive orders service sees, over HTTP, with BlockHound installed
 * (a blocking call on an event loop fails the request that made it): each subclass runs
 * it on a database of its own.
 */
abstract class AbstractOrdersApplicationTests {

	static {
		// Netty 4.2's adaptive allocator takes a lock of its own when it grows its
		// magazines, on event loops too, which Netty's BlockHound integration does not
		// list yet.
		BlockHound.install((builder) -> builder
			.allowBlockingCallsInside("io.netty.buffer.AdaptivePoolingAllocator$MagazineGroup", "tryExpandMagazines"));
	}

	private static final String ORDER = "{\"item\":\"book\",\"quantity\":2}";

	@LocalServerPort
	private int port;

	@Autowired
	private DatabaseClient database;

	private WebTestClient client() {
		return WebTestClient.bindToServer()
			.baseUrl("http://127.0.0.1:" + this.port)
			.responseTimeout(Duration.ofSeconds(30))
			.build();
	}

	private EntityExchangeResult<byte[]> post(String key, String body) {
		return client().post()
			.uri("/orders")
			.header("Idempotency-Key", key)
			.contentType(MediaType.APPLICATION_JSON)
			.bodyValue(body)
			.exchange()
			.expectBody()
			.returnResult();
	}

	private long orders(String item) {
		return this.database.sql("SELECT COUNT(*) AS n FROM orders WHERE item = :item")
			.bind("item", item)
			.map((row) -> ((Number) row.get("n")).longValue())
			.one()
			.blockOptional()
			.orElseThrow();
	}

	@Test
	void aRetryIsAnsweredWithTheFirstAnswerAndTheOrderIsCreatedOnce() {
		String item = "retried-" + TestKeys.newKey();
		String body = "{\"item\":\"" + item + "\",\"quantity\":2}";
		String key = TestKeys.newKey();
		EntityExchangeResult<byte[]> first = post(key, body);
		EntityExchangeResult<byte[]> retry = post(key, body);
		assertThat(first.getStatus().value()).isEqualTo(201);
		assertThat(retry.getStatus().value()).isEqualTo(201);
		assertThat(retry.getResponseBody()).isEqualTo(first.getResponseBody());
		assertThat(retry.getResponseHeaders().getLocation()).isEqualTo(first.getResponseHeaders().getLocation());
		assertThat(retry.getResponseHeaders().getFirst("Idempotent-Replayed")).isEqualTo("true");
		assertThat(first.getResponseHeaders().getFirst("Idempotent-Replayed")).isNull();
		assertThat(orders(item)).isEqualTo(1);
		client().get()
			.uri(String.valueOf(first.getResponseHeaders().getLocation()))
			.exchange()
			.expectStatus()
			.isOk()
			.expectBody()
			.jsonPath("$.item")
			.isEqualTo(item);
	}

	@Test
	void theSameKeyWithAnotherBodyIsRefusedAndCreatesNothing() {
		String key = TestKeys.newKey();
		assertThat(post(key, ORDER).getStatus().value()).isEqualTo(201);
		String item = "other-" + TestKeys.newKey();
		EntityExchangeResult<byte[]> reused = post(key, "{\"item\":\"" + item + "\",\"quantity\":3}");
		assertThat(reused.getStatus().value()).isEqualTo(422);
		assertThat(reused.getResponseHeaders().getContentType()).hasToString("application/problem+json");
		assertThat(orders(item)).isZero();
	}

	private static boolean retried(int status) {
		return status == 409 || status == 503;
	}

	@Test
	void thirtyTwoConcurrentFirstRequestsWithOneKeyCreateOneOrder() throws Exception {
		String item = "raced-" + TestKeys.newKey();
		String body = "{\"item\":\"" + item + "\",\"quantity\":1}";
		String key = TestKeys.newKey();
		int clients = 32;
		CountDownLatch start = new CountDownLatch(1);
		ExecutorService threads = Executors.newFixedThreadPool(clients);
		try {
			List<Future<EntityExchangeResult<byte[]>>> answers = new ArrayList<>();
			for (int i = 0; i < clients; i++) {
				Callable<EntityExchangeResult<byte[]>> send = () -> {
					start.await();
					// As a client does (the starter's RestClient and WebClient
					// interceptors): told the first run is still in flight (its answer
					// not stored within the 2 s wait) or the store did not answer in time
					// (503, as on a loaded machine: 32 reservations at once on a pool of
					// 10 connections), it sends the same request again with the same
					// key.
					EntityExchangeResult<byte[]> answer = post(key, body);
					for (int attempt = 1; retried(answer.getStatus().value()) && attempt < 20; attempt++) {
						if (answer.getStatus().value() == 503) {
							Thread.sleep(100);
						}
						answer = post(key, body);
					}
					return answer;
				};
				answers.add(threads.submit(send));
			}
			start.countDown();
			Set<String> bodies = ConcurrentHashMap.newKeySet();
			for (Future<EntityExchangeResult<byte[]>> answer : answers) {
				EntityExchangeResult<byte[]> result = answer.get();
				assertThat(result.getStatus().value()).isEqualTo(201);
				bodies.add(new String(result.getResponseBodyContent()));
			}
			assertThat(bodies).hasSize(1);
			assertThat(orders(item)).as("orders created").isEqualTo(1);
		}
		finally {
			threads.shutdownNow();
		}
		assertThat(orders(item)).isEqualTo(1);
	}

	@Test
	void blockingOnANonBlockingThreadIsDetectedHere() {
		assertThatExceptionOfType(RuntimeException.class)
			.isThrownBy(() -> Mono.delay(Duration.ofMillis(1)).doOnNext((tick) -> {
				try {
					Thread.sleep(1);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
				}
			}).block(Duration.ofSeconds(10)))
			.havingRootCause()
			.isInstanceOf(BlockingOperationError.class);
	}

}
