package dev.idempotency.web;

import java.lang.reflect.Method;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.idempotency.core.IdempotencyListener;
import dev.idempotency.core.IdempotencyOutcome;
import dev.idempotency.test.TestKeys;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The HTTP door with {@code spring.threads.virtual.enabled=true} (JDK 21 or later;
 * skipped on older JDKs): every request runs on a virtual thread of its own, and 64
 * clients on one key still get one execution. The 63 duplicates wait in flight at the
 * same time, more than there are carrier threads, so a waiting request does not hold a
 * carrier; and JFR reports no virtual thread pinned to its carrier. One subclass per
 * store.
 */
@SpringBootTest(classes = HttpDoorTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "spring.threads.virtual.enabled=true", "idempotency.in-flight.wait=30s" })
@Import(VirtualThreadsOverHttpTests.StoreCallThreadsConfiguration.class)
abstract class VirtualThreadsOverHttpTests {

	private static final int CLIENTS = 64;

	private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	@LocalServerPort
	private int port;

	@Autowired
	private HttpDoorTestApplication.GatedController controller;

	@Autowired
	private StoreCallThreads storeCallThreads;

	@BeforeAll
	static void virtualThreadsNeedJdk21() {
		// Checked here, before the context starts: JUnit's JRE conditions are not
		// inherited by the subclasses.
		assumeTrue(Runtime.version().feature() >= 21, "virtual threads need JDK 21 or later");
	}

	@Test
	void sixtyFourClientsOnOneKeyGetOneExecutionWithoutPinningACarrier() throws Exception {
		// A first round loads and initializes the classes of the path: a virtual thread
		// that loads a class, or waits for another to initialize one, is pinned (JDK 25
		// reports it), once per JVM and not in this starter's hands.
		oneKeyFromAllClients(TestKeys.newKey());
		this.storeCallThreads.threads.clear();

		String key = TestKeys.newKey();
		List<RecordedEvent> pinned;
		List<HttpResponse<String>> responses;
		Path jfr = Files.createTempFile("virtual-threads", ".jfr");
		try (Recording recording = new Recording()) {
			recording.enable("jdk.VirtualThreadPinned").withThreshold(Duration.ZERO).withStackTrace();
			recording.start();
			responses = oneKeyFromAllClients(key);
			recording.stop();
			recording.dump(jfr);
			pinned = RecordingFile.readAllEvents(jfr);
		}
		finally {
			Files.deleteIfExists(jfr);
		}

		assertThat(responses).allSatisfy((response) -> assertThat(response.statusCode()).isEqualTo(201));
		assertThat(responses.stream().map(HttpResponse::body).distinct()).hasSize(1);
		assertThat(responses.stream()
			.filter((response) -> response.headers().firstValue("Idempotent-Replayed").isPresent()))
			.hasSize(CLIENTS - 1);
		assertThat(this.controller.runs(key)).isEqualTo(1);

		assertThat(this.storeCallThreads.threads).as("the threads the requests ran on")
			.hasSize(CLIENTS)
			.allSatisfy((thread) -> assertThat(isVirtual(thread)).as(thread.toString()).isTrue());
		int carriers = Integer.getInteger("jdk.virtualThreadScheduler.parallelism",
				Runtime.getRuntime().availableProcessors());
		assertThat(CLIENTS - 1).as("requests waiting in flight at once, against %d carriers", carriers)
			.isGreaterThan(carriers);
		assertThat(pinned.stream()
			.filter(VirtualThreadsOverHttpTests::isTheStarters)
			.map(VirtualThreadsOverHttpTests::describe)).as("jdk.VirtualThreadPinned events of the starter's")
			.isEmpty();
	}

	/**
	 * Whether a pinned virtual thread was in the starter's hands: a frame of the
	 * starter's above the first of Spring MVC's dispatcher (what the handler mapping and
	 * the handler do inside the dispatch is the application's and Spring's), or no stack
	 * to tell. Once in CI, JDK 25 pinned a request inside Spring's handler mapping (a
	 * contended read lock's first {@code HoldCounter}, "Freeze or preempt failed"), below
	 * the starter's filter: a path the warm-up round had not taken, and no frame of the
	 * starter's above it.
	 */
	private static boolean isTheStarters(RecordedEvent event) {
		if (event.getStackTrace() == null) {
			return true;
		}
		for (jdk.jfr.consumer.RecordedFrame frame : event.getStackTrace().getFrames()) {
			String type = frame.getMethod().getType().getName();
			if (type.startsWith("dev.idempotency.")) {
				return true;
			}
			if (type.equals("org.springframework.web.servlet.DispatcherServlet")) {
				return false;
			}
		}
		return true;
	}

	/**
	 * Sends one request with {@code key} from each client at once and holds the one
	 * execution at its gate until every request has reached the store: the other 63 are
	 * then waiting in flight, and each is answered after the gate opens.
	 */
	private List<HttpResponse<String>> oneKeyFromAllClients(String key) throws Exception {
		// The clients are platform threads, apart from the server's carriers.
		ExecutorService clients = Executors.newFixedThreadPool(CLIENTS);
		try {
			List<Future<HttpResponse<String>>> futures = new ArrayList<>();
			for (int i = 0; i < CLIENTS; i++) {
				futures.add(clients.submit(() -> post(key)));
			}
			awaitAllRequestsAtTheStore(key);
			assertThat(this.controller.finished(key)).isZero();
			this.controller.open(key);
			List<HttpResponse<String>> responses = new ArrayList<>();
			for (Future<HttpResponse<String>> future : futures) {
				responses.add(future.get(60, TimeUnit.SECONDS));
			}
			return responses;
		}
		finally {
			clients.shutdownNow();
		}
	}

	private static String describe(RecordedEvent event) {
		StringBuilder text = new StringBuilder(event.getString("blockingOperation")).append(" (")
			.append(event.getString("pinnedReason"))
			.append(") at");
		if (event.getStackTrace() != null) {
			event.getStackTrace()
				.getFrames()
				.stream()
				.limit(40)
				.forEach((frame) -> text.append("\n    ")
					.append(frame.getMethod().getType().getName())
					.append('.')
					.append(frame.getMethod().getName())
					.append(':')
					.append(frame.getLineNumber()));
		}
		return text.toString();
	}

	/** Until every request has called the store and the one execution is at its gate. */
	private void awaitAllRequestsAtTheStore(String key) throws InterruptedException {
		long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
		while (this.storeCallThreads.threads.size() < CLIENTS || this.controller.runs(key) < 1) {
			assertThat(System.nanoTime())
				.as("waiting for %d requests at the store, %d so far", CLIENTS, this.storeCallThreads.threads.size())
				.isLessThan(deadline);
			Thread.sleep(20);
		}
	}

	private HttpResponse<String> post(String key) throws Exception {
		HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/gated/created"))
			.header("Idempotency-Key", key)
			.header("X-Gate", key)
			.timeout(Duration.ofSeconds(60))
			.POST(HttpRequest.BodyPublishers.noBody())
			.build();
		return this.http.send(request, HttpResponse.BodyHandlers.ofString());
	}

	/** {@code Thread.isVirtual()}, a JDK 21 method, called on a build for JDK 17. */
	private static boolean isVirtual(Thread thread) {
		try {
			Method isVirtual = Thread.class.getMethod("isVirtual");
			return (boolean) isVirtual.invoke(thread);
		}
		catch (ReflectiveOperationException ex) {
			throw new IllegalStateException(ex);
		}
	}

	@TestConfiguration(proxyBeanMethods = false)
	static class StoreCallThreadsConfiguration {

		@Bean
		StoreCallThreads storeCallThreads() {
			return new StoreCallThreads();
		}

	}

	/** The threads that called the store: each request's own. */
	static class StoreCallThreads implements IdempotencyListener {

		final Set<Thread> threads = ConcurrentHashMap.newKeySet();

		@Override
		public void onOutcome(IdempotencyOutcome outcome, String operation) {
		}

		@Override
		public void onStoreCall(String call, long nanos, boolean failed) {
			this.threads.add(Thread.currentThread());
		}

	}

}
