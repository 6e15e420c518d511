package dev.idempotency.web;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyRequestAttributes;
import dev.idempotency.NonBlockingThreads;
import dev.idempotency.test.TestKeys;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import io.netty.util.ResourceLeakDetector;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.task.SimpleAsyncTaskExecutor;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.reactive.config.BlockingExecutionConfigurer;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.reactive.config.WebFluxConfigurer;
import org.springframework.web.server.ServerWebExchange;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The protocol table through the HTTP front door on WebFlux, over real HTTP against
 * Reactor Netty, unchanged from Spring MVC's; and what only a reactive stack shows: an
 * unhandled exception answered by WebFlux, racing first requests on one key, a client
 * gone mid-handler, an answer marked not stored through an exchange attribute. Each
 * subclass runs it against handlers of its kind: annotated controllers
 * ({@link WebFluxIdempotencyWebTests}), functional routes
 * ({@link FunctionalRoutesIdempotencyWebTests}). Blocking calls on non-blocking threads
 * are watched ({@link NonBlockingThreads}): one of the door (or of a store call it did
 * not move off the event loop) fails the test that made it; Netty's leak detector runs at
 * {@code paranoid}, and a leak report of the server's buffers fails the suite.
 */
@ExtendWith(NonBlockingThreads.class)
abstract class AbstractWebFluxIdempotencyWebTests extends AbstractIdempotencyWebTests {

	static {
		// A leaked buffer is reported.
		ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
	}

	/** Netty's leak reports while the suite ran. */
	private static final List<String> leaks = new CopyOnWriteArrayList<>();

	private static final AppenderBase<ILoggingEvent> leakReports = new AppenderBase<>() {

		@Override
		protected void append(ILoggingEvent event) {
			String report = event.getFormattedMessage();
			// The server's buffers, the door's among them; a buffer only the test's own
			// HTTP client decoded (a response body a test did not read) is not the
			// door's.
			if (report.contains("LEAK") && !report.contains("HttpClientCodec")) {
				leaks.add(report);
			}
		}

	};

	private static int lastPort;

	@LocalServerPort
	private int port;

	@BeforeAll
	static void recordLeakReports() {
		leakReports.start();
		((Logger) LoggerFactory.getLogger(ResourceLeakDetector.class)).addAppender(leakReports);
	}

	/**
	 * After the suite: collected buffers are found leaked when the next ones are
	 * allocated, so a few more requests follow a garbage collection.
	 */
	@AfterAll
	static void noBufferLeaked() throws InterruptedException {
		WebTestClient client = WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + lastPort).build();
		for (int i = 0; i < 5; i++) {
			System.gc();
			Thread.sleep(50);
			// Without a key: nothing is stored (a subclass's store is cleaned before).
			client.post()
				.uri("/things")
				.contentType(MediaType.APPLICATION_JSON)
				.bodyValue("{\"name\":\"leak-check\"}")
				.exchange()
				.expectStatus()
				.isCreated();
		}
		((Logger) LoggerFactory.getLogger(ResourceLeakDetector.class)).detachAppender(leakReports);
		assertThat(leaks).as("Netty's leak reports").isEmpty();
	}

	@Test
	void blockingOnANonBlockingThreadIsDetectedHere() {
		NonBlockingThreads.assertBlockingIsDetected();
	}

	/**
	 * No blocking call on a non-blocking thread, also none whose failure a client's event
	 * loop swallowed (a Lettuce callback that blocked left its command hanging).
	 */
	@AfterEach
	void nothingBlocked() {
		NonBlockingThreads.assertNoneBlocked();
	}

	@Override
	WebTestClient client() {
		lastPort = this.port;
		return WebTestClient.bindToServer()
			.baseUrl("http://127.0.0.1:" + this.port)
			.responseTimeout(Duration.ofSeconds(30))
			.build();
	}

	@Test
	void anUnhandledExceptionIsAnswered500AndReleased() {
		String key = TestKeys.newKey();
		for (int i = 0; i < 2; i++) {
			client().post()
				.uri("/throw")
				.header("Idempotency-Key", key)
				.exchange()
				.expectStatus()
				.isEqualTo(500)
				.expectHeader()
				.doesNotExist("Idempotent-Replayed");
		}
		assertThat(this.controller.runs("throw")).isEqualTo(2);
	}

	@Test
	void sixtyFourFirstRequestsOnOneKeyRunTheHandlerOnceAndAllGetItsAnswer() throws Exception {
		String key = TestKeys.newKey();
		int clients = 64;
		CountDownLatch start = new CountDownLatch(1);
		ExecutorService threads = Executors.newFixedThreadPool(clients);
		try {
			List<CompletableFuture<String>> answers = IntStream.range(0, clients)
				.mapToObj((i) -> CompletableFuture.supplyAsync(() -> {
					await(start);
					// As a client does: told the first run is still in flight (its
					// answer not stored within the 1 s wait, as on a loaded machine),
					// it sends the same request again with the same key.
					for (int attempt = 1;; attempt++) {
						var result = client().post()
							.uri("/slow?millis=300")
							.header("Idempotency-Key", key)
							.exchange()
							.returnResult(String.class);
						String answer = result.getStatus().value() + " "
								+ result.getResponseBody().blockLast(Duration.ofSeconds(30));
						if (result.getStatus().value() != 409 || attempt == 20) {
							return answer;
						}
						assertThat(answer).contains("request-in-flight");
					}
				}, threads))
				.toList();
			start.countDown();
			List<String> seen = answers.stream().map(CompletableFuture::join).toList();
			assertThat(this.controller.runs("slow")).as("executions").isEqualTo(1);
			assertThat(seen).as("every one gets the one run's answer").containsOnly("200 {\"run\":1}");
		}
		finally {
			threads.shutdownNow();
		}
	}

	@Test
	void anAnswerTheApplicationMarksNotStoredThroughAnExchangeAttributeIsSentAndItsRetryRunsAgain() {
		String key = TestKeys.newKey();
		for (int run = 1; run <= 2; run++) {
			client().post()
				.uri("/exchange/not-stored")
				.header("Idempotency-Key", key)
				.exchange()
				.expectStatus()
				.isOk()
				.expectHeader()
				.doesNotExist("Idempotent-Replayed")
				.expectBody()
				.jsonPath("$.run")
				.isEqualTo(run);
		}
	}

	/**
	 * A client that goes away while its handler runs: the handler is cancelled, its
	 * record left to its lease, so a retry is answered in flight instead of running it
	 * again beside a run whose effect may still happen.
	 */
	@Test
	void aRetryAfterTheClientWentAwayMidHandlerIsAnsweredInFlightNotRunAgain() throws Exception {
		String key = TestKeys.newKey();
		WebTestClient impatient = client().mutate().responseTimeout(Duration.ofMillis(300)).build();
		assertThatExceptionOfType(Throwable.class).isThrownBy(() -> impatient.post()
			.uri("/exchange/slow")
			.header("Idempotency-Key", key)
			.exchange()
			.expectBody()
			.returnResult());
		client().post()
			.uri("/exchange/slow")
			.header("Idempotency-Key", key)
			.exchange()
			.expectStatus()
			.isEqualTo(409)
			.expectBody()
			.jsonPath("$.type")
			.isEqualTo(PROBLEM + "request-in-flight");
		assertThat(this.controller.runs("exchange-slow")).as("runs of the slow handler").isEqualTo(1);
	}

	private static void await(CountDownLatch latch) {
		try {
			latch.await();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

}
