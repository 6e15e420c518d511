package dev.idempotency.resilience;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.RecordState;
import dev.idempotency.store.StoredResponse;
import dev.idempotency.test.TestKeys;
import dev.idempotency.test.servers.TcpProxy;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * What happens to retries when things fail, over real HTTP against a real store: several
 * nodes, a node killed with SIGKILL while it owns a key, the store unreachable, several
 * principals, and responses too large to store. Every store runs this suite unchanged
 * through a subclass that says how to reach it ({@link StoreFixture}).
 * <p>
 * Two nodes (A and B) share the store for the whole class; the crash and outage tests
 * start nodes of their own. Handlers count their runs per key, so the tests do not
 * disturb each other.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class StoreResilienceTests {

	private static final String ANONYMOUS = "anonymous";

	/**
	 * Store client timeouts in the outage tests: a cut connection fails a request this
	 * fast.
	 */
	private static final Duration CUT_TIMEOUT = Duration.ofSeconds(1);

	private StoreFixture fixture;

	private Node nodeA;

	private Node nodeB;

	/** The store this suite runs against. */
	protected abstract StoreFixture createFixture();

	@BeforeAll
	void startNodes() throws InterruptedException {
		this.fixture = createFixture();
		this.nodeA = warmedUp(Node.start("a", Settings.with(this.fixture.properties())));
		this.nodeB = warmedUp(Node.start("b", Settings.with(this.fixture.properties())));
	}

	@AfterAll
	void stopNodes() {
		try (StoreFixture store = this.fixture; Node a = this.nodeA; Node b = this.nodeB) {
			// closed in reverse order: the nodes, then the store's clean-up
		}
	}

	// ---- many nodes
	// ----------------------------------------------------------------------------

	@Test
	void aMutationAnsweredByOneNodeIsReplayedByAnother() {
		String key = TestKeys.newKey();
		HttpResponse<byte[]> first = Http.send(order(this.nodeA, key, "anvil"));
		assertThat(first.statusCode()).as(Http.describe(first)).isEqualTo(201);
		assertThat(Http.replayed(first)).isFalse();

		HttpResponse<byte[]> retry = Http.send(order(this.nodeB, key, "anvil"));
		assertThat(retry.statusCode()).as(Http.describe(retry)).isEqualTo(201);
		assertThat(Http.replayed(retry)).isTrue();
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(retry.headers().firstValue("Location")).contains("/orders/anvil");
		assertThat(Http.json(retry).path("node").asString()).as("node A's answer, replayed by B").isEqualTo("a");
		assertThat(totalRuns("orders", key)).isEqualTo(1);
	}

	@Test
	void concurrentFirstRequestsSpreadOverTwoNodesRunTheHandlerOnce() throws Exception {
		String key = TestKeys.newKey();
		int requests = 32;
		CyclicBarrier start = new CyclicBarrier(requests);
		ExecutorService threads = Executors.newFixedThreadPool(requests);
		List<Future<HttpResponse<byte[]>>> answers = new ArrayList<>();
		try {
			for (int i = 0; i < requests; i++) {
				Node node = (i % 2 == 0) ? this.nodeA : this.nodeB;
				// The handler holds the key long enough for every other request to meet
				// it in flight.
				HttpRequest request = slow(node, key, Duration.ofMillis(800));
				answers.add(threads.submit(() -> {
					start.await(10, TimeUnit.SECONDS);
					return Http.send(request);
				}));
			}
			List<HttpResponse<byte[]>> executed = new ArrayList<>();
			List<HttpResponse<byte[]>> replayed = new ArrayList<>();
			List<HttpResponse<byte[]>> inFlight = new ArrayList<>();
			for (Future<HttpResponse<byte[]>> answer : answers) {
				HttpResponse<byte[]> response = answer.get(60, TimeUnit.SECONDS);
				if (response.statusCode() == 200 && !Http.replayed(response)) {
					executed.add(response);
				}
				else if (response.statusCode() == 200) {
					replayed.add(response);
				}
				else if (response.statusCode() == 409
						&& (Http.PROBLEMS + "request-in-flight").equals(Http.problemType(response))) {
					inFlight.add(response);
				}
				else {
					fail("unexpected answer: " + Http.describe(response));
				}
			}
			assertThat(executed).as("answers of the one execution").hasSize(1);
			assertThat(totalRuns("slow", key)).as("handler runs on both nodes together").isEqualTo(1);
			byte[] body = executed.get(0).body();
			assertThat(replayed).allSatisfy((response) -> assertThat(response.body()).isEqualTo(body));
			assertThat(executed.size() + replayed.size() + inFlight.size()).isEqualTo(requests);

			HttpResponse<byte[]> last = Http.send(slow(this.nodeB, key, Duration.ZERO));
			assertThat(Http.replayed(last)).as(Http.describe(last)).isTrue();
			assertThat(last.body()).isEqualTo(body);
			assertThat(totalRuns("slow", key)).isEqualTo(1);
		}
		finally {
			threads.shutdownNow();
		}
	}

	// ---- crashed owner
	// -------------------------------------------------------------------------

	@Test
	void anOwnerStoppedWithSigtermReleasesTheKeyOfARunItCannotFinishSoARetryElsewhereRunsAtOnce() throws Exception {
		String key = TestKeys.newKey();
		RecordId id = new RecordId(ANONYMOUS, key);
		Map<String, String> properties = new LinkedHashMap<>(Settings.with(this.fixture.properties()));
		// A lease that a retry would plainly wait out, and a graceful shutdown that gives
		// up on the held request after 1 s.
		properties.put("idempotency.lease", "60s");
		properties.put("server.shutdown", "graceful");
		properties.put("spring.lifecycle.timeout-per-shutdown-phase", "1s");
		try (ChildNode child = ChildNode.start("sigterm-" + getClass().getSimpleName(), properties)) {
			child.awaitReady(Duration.ofSeconds(60));
			warmUp(child.uri("/orders"));
			// A handler that an interrupt does not stop: the web server's shutdown cannot
			// end it, so its run is still going when the node stops.
			CompletableFuture<HttpResponse<byte[]>> held = Http.sendAsync(Http.post(child.uri("/slow"), key, "{}",
					ResilienceTestApplication.DELAY_HEADER, Long.toString(Duration.ofMinutes(10).toMillis()),
					ResilienceTestApplication.IGNORE_INTERRUPTS_HEADER, "true"));
			awaitRecord(this.nodeA.store(), id, RecordState.IN_PROGRESS, Duration.ofSeconds(20));
			assertInFlight(Http.send(slow(this.nodeA, key, Duration.ZERO)));

			child.terminate(Duration.ofSeconds(60));
			assertThat(held).as("the held request is cut").failsWithin(Duration.ofSeconds(5));

			assertThat(this.nodeA.store().find(id)).as("released by the stopping node, not left to its lease")
				.isEmpty();
			HttpResponse<byte[]> retry = Http.send(slow(this.nodeA, key, Duration.ZERO));
			assertThat(retry.statusCode()).as(Http.describe(retry)).isEqualTo(200);
			assertThat(Http.replayed(retry)).isFalse();
			assertThat(this.nodeA.runs("slow", key)).as("runs on the survivor").isEqualTo(1);
			assertThat(child.logTail()).contains("released as the engine stops");
		}
	}

	@Test
	void aKilledOwnerBlocksItsKeyForAboutOneLeaseThenASurvivorRunsItOnce() throws Exception {
		String key = TestKeys.newKey();
		RecordId id = new RecordId(ANONYMOUS, key);
		IdempotencyStore store = this.nodeA.store();
		double takeoversBefore = this.nodeA.outcomes("taken_over");
		try (ChildNode child = ChildNode.start("crash-" + getClass().getSimpleName(),
				Settings.with(this.fixture.properties()))) {
			child.awaitReady(Duration.ofSeconds(60));
			warmUp(child.uri("/orders"));
			CompletableFuture<HttpResponse<byte[]>> held = Http
				.sendAsync(slow(child.uri("/slow"), key, Duration.ofMinutes(10)));
			IdempotencyRecord owned = awaitRecord(store, id, RecordState.IN_PROGRESS, Duration.ofSeconds(20));
			assertThat(owned.leaseExpiresAt()).isNotNull();
			HttpResponse<byte[]> whileAlive = Http.send(slow(this.nodeA, key, Duration.ZERO));
			assertInFlight(whileAlive);

			long killedAt = System.nanoTime();
			Instant killedAtWall = Instant.now();
			int exit = child.kill();
			assertThat(child.isAlive()).isFalse();
			assertThat(exit).as("exit status of SIGKILL").isEqualTo(128 + 9);
			assertThat(held).as("the client of the killed node gets no answer").failsWithin(Duration.ofSeconds(5));
			// No heartbeat comes any more: this lease end is final.
			Instant leaseEnd = store.find(id).orElseThrow().leaseExpiresAt();

			List<HttpResponse<byte[]>> refused = new ArrayList<>();
			HttpResponse<byte[]> usable = null;
			long deadline = killedAt + Duration.ofSeconds(30).toNanos();
			while (usable == null && System.nanoTime() < deadline) {
				HttpResponse<byte[]> retry = Http.send(slow(this.nodeA, key, Duration.ZERO));
				if (retry.statusCode() == 200) {
					usable = retry;
				}
				else {
					assertInFlight(retry);
					refused.add(retry);
					Thread.sleep(50);
				}
			}
			Instant usableAtWall = Instant.now();
			Duration untilUsable = Duration.ofNanos(System.nanoTime() - killedAt);
			assertThat(usable).as("a 2xx on the survivor within 30 s of the kill").isNotNull();
			System.out.printf(
					"[resilience] %s: key usable %d ms after SIGKILL (lease %s, lease end %d ms after"
							+ " the kill, %d in-flight answers before)%n",
					getClass().getSimpleName(), untilUsable.toMillis(), Settings.LEASE,
					Duration.between(killedAtWall, leaseEnd).toMillis(), refused.size());

			assertThat(refused).as("in-flight answers while the dead owner's lease lived").isNotEmpty();
			assertThat(usableAtWall).as("taken over only after the lease ended (store clock, same host)")
				.isAfterOrEqualTo(leaseEnd.minusMillis(100));
			assertThat(untilUsable).as("blocked for about one lease, not the key's lifetime")
				.isLessThan(Duration.ofSeconds(15));
			assertThat(Http.replayed(usable)).isFalse();
			assertThat(this.nodeA.runs("slow", key)).as("runs on the survivor").isEqualTo(1);
			assertThat(this.nodeA.outcomes("taken_over") - takeoversBefore).isEqualTo(1);

			HttpResponse<byte[]> again = Http.send(slow(this.nodeB, key, Duration.ZERO));
			assertThat(Http.replayed(again)).as(Http.describe(again)).isTrue();
			assertThat(again.body()).isEqualTo(usable.body());
			assertThat(totalRuns("slow", key)).isEqualTo(1);
		}
	}

	// ---- store outage
	// --------------------------------------------------------------------------

	@Test
	void failClosedWhileTheStoreIsCutNothingRunsAndServiceResumesWhenItIsBack() throws Exception {
		try (TcpProxy proxy = TcpProxy.to(this.fixture.port());
				Node node = warmedUp(
						Node.start("closed", Settings.with(this.fixture.properties(proxy.port(), CUT_TIMEOUT))))) {
			assertServes(node);

			proxy.cut();
			String key = TestKeys.newKey();
			long cutSentAt = System.nanoTime();
			HttpResponse<byte[]> cut = Http.send(order(node, key, "ledger"));
			long cutAnswered = System.nanoTime() - cutSentAt;
			assertStoreUnavailable(cut);
			assertThat(node.runs("orders", key)).isZero();

			proxy.restore();
			long restoredAt = System.nanoTime();
			// A client retrying with its key: 503 until the store answers again, then one
			// run.
			HttpResponse<byte[]> answer = cut;
			long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
			while (answer.statusCode() == 503 && System.nanoTime() < deadline) {
				assertStoreUnavailable(answer);
				assertThat(node.runs("orders", key)).isZero();
				Thread.sleep(200);
				answer = Http.send(order(node, key, "ledger"));
			}
			assertThat(answer.statusCode()).as(Http.describe(answer)).isEqualTo(201);
			System.out.printf(
					"[resilience] %s: fail-closed 503 answered in %d ms while cut; first 2xx %d ms after"
							+ " the store came back%n",
					getClass().getSimpleName(), Duration.ofNanos(cutAnswered).toMillis(),
					Duration.ofNanos(System.nanoTime() - restoredAt).toMillis());
			assertThat(Http.replayed(answer)).isFalse();
			HttpResponse<byte[]> replay = Http.send(order(node, key, "ledger"));
			assertThat(Http.replayed(replay)).as(Http.describe(replay)).isTrue();
			assertThat(replay.body()).isEqualTo(answer.body());
			assertThat(node.runs("orders", key)).isEqualTo(1);
		}
	}

	@Test
	void failOpenWhileTheStoreIsCutRunsUnprotectedAndCountsItThenServiceResumes() throws Exception {
		try (TcpProxy proxy = TcpProxy.to(this.fixture.port());
				Node node = warmedUp(Node.start("open",
						Settings.with(withFailOpen(this.fixture.properties(proxy.port(), CUT_TIMEOUT)))))) {
			assertServes(node);
			double failOpenBefore = node.outcomes("fail_open");

			proxy.cut();
			String key = TestKeys.newKey();
			HttpResponse<byte[]> first = Http.send(order(node, key, "unguarded"));
			HttpResponse<byte[]> second = Http.send(order(node, key, "unguarded"));
			assertThat(first.statusCode()).as(Http.describe(first)).isEqualTo(201);
			assertThat(second.statusCode()).as(Http.describe(second)).isEqualTo(201);
			assertThat(Http.replayed(second)).isFalse();
			assertThat(node.runs("orders", key)).as("unprotected: each request runs").isEqualTo(2);
			assertThat(node.outcomes("fail_open") - failOpenBefore).isEqualTo(2);

			proxy.restore();
			long restoredAt = System.nanoTime();
			awaitStoreAnswers(node.store(), Duration.ofSeconds(30));
			System.out.printf("[resilience] %s: fail-open node's store answers %d ms after it came back%n",
					getClass().getSimpleName(), Duration.ofNanos(System.nanoTime() - restoredAt).toMillis());
			String afterKey = TestKeys.newKey();
			HttpResponse<byte[]> run = Http.send(order(node, afterKey, "guarded"));
			HttpResponse<byte[]> replay = Http.send(order(node, afterKey, "guarded"));
			assertThat(Http.replayed(run)).as(Http.describe(run)).isFalse();
			assertThat(Http.replayed(replay)).as(Http.describe(replay)).isTrue();
			assertThat(replay.body()).isEqualTo(run.body());
			assertThat(node.runs("orders", afterKey)).isEqualTo(1);
			assertThat(node.outcomes("fail_open") - failOpenBefore).as("no fail-open once the store is back")
				.isEqualTo(2);
		}
	}

	/**
	 * The limit of the protocol when the store fails between reserve and complete: the
	 * client gets its answer but nothing is stored, so the key stays in progress until
	 * the lease ends and a retry then runs the operation a second time. The key is not
	 * stuck, but this is the one failure in which a retry runs twice.
	 */
	@Test
	void aStoreCutWhileTheOwnerRunsLeavesTheKeyInFlightForOneLeaseThenARetryRunsAgain() throws Exception {
		try (TcpProxy proxy = TcpProxy.to(this.fixture.port());
				Node node = warmedUp(
						Node.start("cut-mid", Settings.with(this.fixture.properties(proxy.port(), CUT_TIMEOUT))))) {
			String key = TestKeys.newKey();
			RecordId id = new RecordId(ANONYMOUS, key);
			CompletableFuture<HttpResponse<byte[]>> owner = Http.sendAsync(slow(node, key, Duration.ofMillis(1500)));
			awaitRecord(this.nodeA.store(), id, RecordState.IN_PROGRESS, Duration.ofSeconds(20));
			proxy.cut();
			HttpResponse<byte[]> answered = owner.get(30, TimeUnit.SECONDS);
			proxy.restore();
			assertThat(answered.statusCode()).as("the client has its answer: %s", Http.describe(answered))
				.isEqualTo(200);
			assertThat(node.runs("slow", key)).isEqualTo(1);
			assertThat(node.executions("store_error")).as("the completion failed").isPositive();
			IdempotencyRecord stuck = this.nodeA.store().find(id).orElseThrow();
			assertThat(stuck.state()).as("nothing stored").isEqualTo(RecordState.IN_PROGRESS);

			HttpResponse<byte[]> retry = Http.send(slow(this.nodeA, key, Duration.ZERO));
			List<HttpResponse<byte[]>> refused = new ArrayList<>();
			long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
			while (retry.statusCode() != 200 && System.nanoTime() < deadline) {
				assertInFlight(retry);
				refused.add(retry);
				Thread.sleep(50);
				retry = Http.send(slow(this.nodeA, key, Duration.ZERO));
			}
			assertThat(retry.statusCode()).as(Http.describe(retry)).isEqualTo(200);
			assertThat(Instant.now())
				.as("run again only once the lease ended (%d in-flight answers before)", refused.size())
				.isAfterOrEqualTo(stuck.leaseExpiresAt().minusMillis(100));
			assertThat(Http.replayed(retry)).isFalse();
			assertThat(node.runs("slow", key) + totalRuns("slow", key)).as("runs in all: the documented limit")
				.isEqualTo(2);
		}
	}

	// ---- principals
	// ----------------------------------------------------------------------------

	@Test
	void twoPrincipalsWithOneKeyRunSeparatelyAndNeverSeeEachOthersResponse() {
		String key = TestKeys.newKey();
		HttpResponse<byte[]> alice = Http.send(order(this.nodeA, key, "shared", "alice"));
		HttpResponse<byte[]> bob = Http.send(order(this.nodeB, key, "shared", "bob"));
		assertThat(alice.statusCode()).as(Http.describe(alice)).isEqualTo(201);
		assertThat(bob.statusCode()).as(Http.describe(bob)).isEqualTo(201);
		assertThat(Http.replayed(bob)).as("bob's request is not a retry of alice's").isFalse();
		assertThat(Http.json(alice).path("user").asString()).isEqualTo("alice");
		assertThat(Http.json(bob).path("user").asString()).isEqualTo("bob");
		assertThat(alice.headers().firstValue("Set-Cookie")).as("the handler does send credentials").isPresent();
		assertThat(alice.headers().firstValue("Authorization")).isPresent();

		HttpResponse<byte[]> aliceAgain = Http.send(order(this.nodeB, key, "shared", "alice"));
		HttpResponse<byte[]> bobAgain = Http.send(order(this.nodeA, key, "shared", "bob"));
		assertThat(Http.replayed(aliceAgain)).isTrue();
		assertThat(Http.replayed(bobAgain)).isTrue();
		assertThat(aliceAgain.body()).isEqualTo(alice.body());
		assertThat(bobAgain.body()).isEqualTo(bob.body());
		for (HttpResponse<byte[]> replay : List.of(aliceAgain, bobAgain)) {
			assertThat(replay.headers().firstValue("Set-Cookie")).isEmpty();
			assertThat(replay.headers().firstValue("Authorization")).isEmpty();
			assertThat(replay.headers().firstValue("X-Trace")).as("configured headers are replayed").isPresent();
		}
		assertThat(totalRuns("orders", key)).isEqualTo(2);

		for (String user : List.of("alice", "bob")) {
			IdempotencyRecord record = this.nodeA.store().find(new RecordId("user:" + user, key)).orElseThrow();
			StoredResponse stored = record.response();
			assertThat(record.state()).isEqualTo(RecordState.COMPLETED);
			assertThat(stored.headers().keySet()).as("stored headers of %s", user)
				.noneMatch((name) -> name.equalsIgnoreCase("Set-Cookie") || name.equalsIgnoreCase("Authorization"))
				.anyMatch((name) -> name.equalsIgnoreCase("X-Trace"));
			String body = new String(stored.body(), StandardCharsets.UTF_8);
			assertThat(body).doesNotContain("secret-of", "token-of").contains("\"user\":\"" + user + "\"");
		}
	}

	// ---- bodies over the maximum
	// ---------------------------------------------------------------

	@Test
	void aResponseOverTheMaximumReachesTheClientWholeIsNotStoredAndARetryRunsAgain() throws Exception {
		int size = Settings.MAX_BODY_BYTES * 3 + 17;
		String key = TestKeys.newKey();
		HttpResponse<byte[]> first = Http.send(big(this.nodeA, key, size));
		assertThat(first.statusCode()).isEqualTo(200);
		assertThat(new String(first.body(), StandardCharsets.UTF_8))
			.isEqualTo(ResilienceTestApplication.CountingController.pattern(size));
		awaitReleased(this.nodeA.store(), new RecordId(ANONYMOUS, key), Duration.ofSeconds(5));

		HttpResponse<byte[]> retry = Http.send(big(this.nodeB, key, size));
		assertThat(retry.statusCode()).isEqualTo(200);
		assertThat(Http.replayed(retry)).isFalse();
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(totalRuns("big", key)).isEqualTo(2);
	}

	@Test
	void aResponseWithinTheMaximumIsStoredWholeAndReplayed() throws Exception {
		int size = Settings.MAX_BODY_BYTES - 100;
		String key = TestKeys.newKey();
		HttpResponse<byte[]> first = Http.send(big(this.nodeA, key, size));
		assertThat(first.statusCode()).as(Http.describe(first)).isEqualTo(200);
		StoredResponse stored = awaitRecord(this.nodeA.store(), new RecordId(ANONYMOUS, key), RecordState.COMPLETED,
				Duration.ofSeconds(5))
			.response();
		assertThat(stored.body()).isEqualTo(first.body());
		HttpResponse<byte[]> retry = Http.send(big(this.nodeB, key, size));
		assertThat(Http.replayed(retry)).isTrue();
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(totalRuns("big", key)).isEqualTo(1);
	}

	// ---- helpers
	// -------------------------------------------------------------------------------

	private int totalRuns(String endpoint, String key) {
		return this.nodeA.runs(endpoint, key) + this.nodeB.runs(endpoint, key);
	}

	private static HttpRequest order(Node node, String key, String name, String... user) {
		String[] headers = (user.length == 0) ? new String[0]
				: new String[] { ResilienceTestApplication.USER_HEADER, user[0] };
		return Http.post(node.uri("/orders"), key, "{\"name\":\"" + name + "\"}", headers);
	}

	private static HttpRequest slow(Node node, String key, Duration delay) {
		return slow(node.uri("/slow"), key, delay);
	}

	private static HttpRequest slow(java.net.URI uri, String key, Duration delay) {
		return Http.post(uri, key, "{}", ResilienceTestApplication.DELAY_HEADER, Long.toString(delay.toMillis()));
	}

	private static HttpRequest big(Node node, String key, int bytes) {
		return Http.post(node.uri("/big?bytes=" + bytes), key, "{}");
	}

	private static Map<String, String> withFailOpen(Map<String, String> properties) {
		Map<String, String> open = new java.util.LinkedHashMap<>(properties);
		open.put("idempotency.store.failure-mode", "fail-open");
		return open;
	}

	private static Node warmedUp(Node node) throws InterruptedException {
		awaitStoreAnswers(node.store(), Duration.ofSeconds(30));
		warmUp(node.uri("/orders"));
		return node;
	}

	/**
	 * Keyed requests until one is served: a cold JVM on a busy machine may need longer
	 * than a client timeout for its first store call (connection, script loading), and is
	 * answered 503.
	 */
	private static void warmUp(java.net.URI orders) {
		long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
		HttpResponse<byte[]> answer;
		do {
			answer = Http.send(Http.post(orders, TestKeys.newKey(), "{\"name\":\"warm-up\"}"));
		}
		while (answer.statusCode() == 503 && System.nanoTime() < deadline);
		assertThat(answer.statusCode()).as("warm-up: %s", Http.describe(answer)).isEqualTo(201);
	}

	/** A first run and its replay: the node works through its store. */
	private static void assertServes(Node node) {
		String key = TestKeys.newKey();
		HttpResponse<byte[]> run = Http.send(order(node, key, "control"));
		HttpResponse<byte[]> replay = Http.send(order(node, key, "control"));
		assertThat(run.statusCode()).as(Http.describe(run)).isEqualTo(201);
		assertThat(Http.replayed(replay)).as(Http.describe(replay)).isTrue();
		assertThat(node.runs("orders", key)).isEqualTo(1);
	}

	private static void assertInFlight(HttpResponse<byte[]> response) {
		assertThat(response.statusCode()).as(Http.describe(response)).isEqualTo(409);
		assertThat(Http.problemType(response)).isEqualTo(Http.PROBLEMS + "request-in-flight");
		assertThat(response.headers().firstValue("Retry-After")).isPresent();
	}

	private static void assertStoreUnavailable(HttpResponse<byte[]> response) {
		assertThat(response.statusCode()).as(Http.describe(response)).isEqualTo(503);
		assertThat(response.headers().firstValue("Retry-After"))
			.hasValueSatisfying((seconds) -> assertThat(Long.parseLong(seconds)).isPositive());
		assertThat(Http.problemType(response)).isEqualTo(Http.PROBLEMS + "store-unavailable");
		assertThat(Http.json(response).path("status").asInt()).isEqualTo(503);
	}

	private static IdempotencyRecord awaitRecord(IdempotencyStore store, RecordId id, RecordState state,
			Duration timeout) throws InterruptedException {
		long deadline = System.nanoTime() + timeout.toNanos();
		IdempotencyRecord record = null;
		while (System.nanoTime() < deadline) {
			record = store.find(id).orElse(null);
			if (record != null && record.state() == state) {
				return record;
			}
			Thread.sleep(50);
		}
		throw new AssertionError("no " + state + " record for " + id + " within " + timeout + "; last seen: " + record);
	}

	/**
	 * Waits until the record is gone, failing if it is ever completed. The client has the
	 * whole response (its length was announced) before the filter releases the key: the
	 * record may still be in progress for a moment.
	 */
	private static void awaitReleased(IdempotencyStore store, RecordId id, Duration timeout)
			throws InterruptedException {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (System.nanoTime() < deadline) {
			IdempotencyRecord record = store.find(id).orElse(null);
			if (record == null) {
				return;
			}
			assertThat(record.state()).as("a record of a response over the maximum").isEqualTo(RecordState.IN_PROGRESS);
			Thread.sleep(20);
		}
		throw new AssertionError("the record " + id + " was not released within " + timeout);
	}

	private static void awaitStoreAnswers(IdempotencyStore store, Duration timeout) throws InterruptedException {
		RecordId probe = new RecordId("probe", TestKeys.newKey());
		long deadline = System.nanoTime() + timeout.toNanos();
		RuntimeException last = null;
		while (System.nanoTime() < deadline) {
			try {
				store.find(probe);
				return;
			}
			catch (RuntimeException ex) {
				last = ex;
				Thread.sleep(200);
			}
		}
		throw new AssertionError("the store did not answer within " + timeout, last);
	}

}
