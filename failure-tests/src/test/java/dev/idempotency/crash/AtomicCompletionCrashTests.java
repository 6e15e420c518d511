package dev.idempotency.crash;

import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.autoconfigure.jdbc.JdbcStoreTestSupport;
import dev.idempotency.core.internal.IdempotencyEngine;
import dev.idempotency.core.internal.IdempotentCall;
import dev.idempotency.crash.CrashTestApplication.NewOrder;
import dev.idempotency.crash.CrashTestApplication.PlacedOrder;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.RecordState;
import dev.idempotency.store.jdbc.JdbcIdempotencyDialect;
import dev.idempotency.store.jdbc.JdbcIdempotencyStore;
import dev.idempotency.test.TestKeys;
import dev.idempotency.test.servers.JdbcTestDatabase;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.jdbc.core.simple.JdbcClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * Atomic completion, proved end to end with crashes: {@code POST /orders} of
 * {@link CrashTestApplication} saves an order (Spring Data JDBC) and moves a ledger in
 * one transaction on PostgreSQL (a schema of this run's own), the method door protects
 * the call with the request's {@code Idempotency-Key}, and the record lives in the same
 * database with {@code idempotency.store.jdbc.transactional-completion=true}, so its
 * completion joins that transaction. Four nodes (contexts in this JVM) serve the
 * requests; lease 1 s, heartbeat 500 ms. Everything runs once per {@link Mode}: in lease
 * mode the door's completion of its reservation joins the transaction, in
 * record-after-success mode its one recording of the answer does.
 * <p>
 * Each trial takes a fresh UUIDv7 key and arms its first node to crash at one
 * {@link CrashPoint}: {@link CrashPoint#BEFORE_COMMIT before the commit} (the order, the
 * ledger update and the completion are written, uncommitted),
 * {@link CrashPoint#AFTER_COMMIT after it} (before the answer is written), or not at all.
 * A client whose request gets no useful answer (an I/O error or a {@code 5xx}) retries
 * with the same key on another node, and honours {@code 409} in flight with its
 * {@code Retry-After}, until it gets a final answer. Then the database must hold exactly
 * one order for the key, the ledger must have moved by its amount exactly once, the
 * record must be completed, and the client's final answer must be the committed order
 * (same id). After a crash before the commit the retry placed the order (the node that
 * crashed left nothing committed; in lease mode its record was taken over once its lease
 * ran out, in record-after-success mode there was no record); after a crash after the
 * commit the retry is a replay; without a crash the answer is the first one, and a retry
 * on another node replays it. In record-after-success mode a fourth kind of trial races
 * two first attempts of one key on two nodes, both inside the operation at once: one
 * order, and both answered with it.
 * <p>
 * <b>Why this crash is a process crash, for the database.</b> At the crash point the
 * node's every session is ended with {@code pg_terminate_backend} from an administrator's
 * connection (the node's sessions carry its name as {@code ApplicationName}), and the
 * test waits until the server has ended them. PostgreSQL then does what it does when the
 * client process dies and its sockets close: it aborts the open transaction, so nothing
 * uncommitted survives, and what was committed stays. The request is unwound by an
 * {@link Error} ({@code NodeCrash}), so the node writes nothing more for it (its attempt
 * to roll back finds a dead connection), the client gets a {@code 500} without an order,
 * and the test closes the node's context, which stops its engine (and its heartbeat
 * thread, so the lease is not kept alive), its web server and its pool, and starts a
 * fresh node in its place. The node's engine had already counted the completion as done
 * ({@code idempotency.executions{result=completed}}): it is the database that undid it.
 * <p>
 * <b>What it does not cover.</b> The operating system's side of a kill: the client sees a
 * {@code 500} rather than a reset connection or a silent peer (the retry logic treats
 * them alike), and the server sees its sessions terminated rather than the TCP
 * connections reset or, for a machine that vanished, silent until a keepalive or timeout
 * ends them (the lease then runs out while the session still holds its row lock, which
 * delays a takeover until the server notices). Threads of the node other than the
 * request's are not frozen at the crash point but stopped by closing the context right
 * after; none of them writes to the database in these trials (no purge, no other request;
 * the heartbeat of this reservation ended when it was completed). A crash inside the
 * commit itself (the commit record flushed, the acknowledgement lost) is not injected.
 * <p>
 * By default each kind of trial gets at least 20 trials per mode, and more while the mode
 * is within 30 seconds; {@code -Dcrash.trials=N} runs exactly N of each. The figures are
 * printed as a {@code [crash]} line.
 */
class AtomicCompletionCrashTests {

	private static final String TABLE = "idempotency_record";

	private static final String ADMIN_URL = "jdbc:postgresql://127.0.0.1:5432/test?ApplicationName=crash-admin";

	/**
	 * Trials per crash point with {@code -Dcrash.trials=N}; else at least
	 * {@link #MIN_TRIALS_PER_POINT}, and more while the run is within
	 * {@link #TIME_BUDGET}.
	 */
	private static final @Nullable Integer TRIALS_PER_POINT = Integer.getInteger("crash.trials");

	private static final int MIN_TRIALS_PER_POINT = 20;

	/**
	 * Per mode. Not a limit: the run goes on past it until each point had its minimum.
	 */
	private static final Duration TIME_BUDGET = Duration.ofSeconds(30);

	/** Nodes serving at once; a crashed one is replaced in the background. */
	private static final int NODES = 4;

	private static final Duration CLIENT_TIMEOUT = Duration.ofSeconds(20);

	/** Longest a trial may take to get its final answer. */
	private static final Duration TRIAL_DEADLINE = Duration.ofSeconds(60);

	private static final HttpClient CLIENT = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(5))
		.build();

	private static final JsonMapper JSON = new JsonMapper();

	private JdbcTestDatabase database;

	private HikariDataSource dataSource;

	private JdbcClient jdbc;

	private JdbcIdempotencyStore store;

	private final List<Cluster> clusters = new ArrayList<>();

	/** Sends the other attempt of a race (not the common pool: one thread on 2 cores). */
	private final ExecutorService racer = Executors.newSingleThreadExecutor();

	@BeforeEach
	void createSchema() throws Exception {
		this.database = JdbcTestDatabase.postgres().create();
		this.dataSource = this.database.dataSource(2);
		JdbcStoreTestSupport.createSchema(this.dataSource, TABLE);
		this.jdbc = JdbcClient.create(this.dataSource);
		this.store = JdbcIdempotencyStore.builder(this.dataSource)
			.dialect(JdbcIdempotencyDialect.POSTGRESQL)
			.tableName(TABLE)
			.transactionalCompletion(false)
			.queryTimeout(Duration.ZERO)
			.reserveCommit(JdbcIdempotencyStore.ReserveCommit.OFF)
			.build();
		this.jdbc
			.sql("CREATE TABLE crash_order (id BIGSERIAL PRIMARY KEY, idem_key VARCHAR(64) NOT NULL,"
					+ " item VARCHAR(100) NOT NULL, amount INT NOT NULL)")
			.update();
		this.jdbc.sql("CREATE INDEX crash_order_key_idx ON crash_order (idem_key)").update();
		this.jdbc.sql("CREATE TABLE crash_ledger (id INT PRIMARY KEY, total BIGINT NOT NULL, orders INT NOT NULL)")
			.update();
		this.jdbc.sql("INSERT INTO crash_ledger (id, total, orders) VALUES (1, 0, 0)").update();
	}

	@AfterEach
	void dropSchema() throws Exception {
		try {
			this.racer.shutdownNow();
			for (Cluster cluster : this.clusters) {
				cluster.close();
			}
		}
		finally {
			try {
				this.dataSource.close();
			}
			finally {
				this.database.drop();
			}
		}
	}

	@ParameterizedTest
	@EnumSource
	void everyKeyTakesEffectOnceWhereverItsNodeCrashes(Mode mode) {
		Cluster cluster = cluster(mode, true, NODES);
		Summary summary = new Summary(mode);
		long started = System.nanoTime();
		List<Scenario> scenarios = Arrays.stream(Scenario.values())
			.filter((scenario) -> scenario != Scenario.RACE || mode == Mode.RECORD_AFTER_SUCCESS)
			.toList();
		Random random = new Random();
		long amounts = 0;
		int trial = 0;
		for (int round = 0; moreRounds(round, started); round++) {
			for (Scenario scenario : scenarios) {
				int amount = 1 + random.nextInt(1000);
				amounts += amount;
				NewOrder order = new NewOrder("item-" + trial, amount);
				if (scenario == Scenario.RACE) {
					race(cluster, summary.counts.get(scenario), trial, order);
				}
				else {
					trial(mode, cluster, summary.counts.get(scenario), trial, scenario.point, order);
				}
				trial++;
			}
		}
		summary.seconds = (System.nanoTime() - started) / 1e9;
		summary.nodesStarted = cluster.nodesStarted();
		System.out.println(summary);
		// Across the run: one order per key, and the ledger holds each order once.
		assertThat(this.jdbc.sql("SELECT count(*) FROM crash_order").query(Long.class).single()).isEqualTo(trial);
		assertThat(this.jdbc.sql("SELECT count(DISTINCT idem_key) FROM crash_order").query(Long.class).single())
			.isEqualTo(trial);
		assertThat(ledger()).isEqualTo(new Ledger(amounts, trial));
	}

	private static boolean moreRounds(int round, long started) {
		if (TRIALS_PER_POINT != null) {
			return round < TRIALS_PER_POINT;
		}
		return round < MIN_TRIALS_PER_POINT || System.nanoTime() - started < TIME_BUDGET.toNanos();
	}

	/**
	 * Without {@code transactional-completion} the store does not join the business
	 * transaction, so the method door records the result only after that transaction has
	 * committed (and releases the key if it does not commit). A crash before the commit
	 * then leaves no answer behind: in lease mode the reservation is still in progress
	 * (taken over after its lease), in record-after-success mode there is no record.
	 * (Were the record completed at once, in a transaction of its own, it would answer
	 * with an order that was never committed.) What this mode cannot close is the window
	 * after the commit and before the record is written: that is model A's, not tested
	 * here.
	 */
	@ParameterizedTest
	@EnumSource
	void withoutTransactionalCompletionTheRecordWaitsForTheCommitSoACrashBeforeItLeavesNoAnswer(Mode mode) {
		Cluster cluster = cluster(mode, false, 1);
		CrashNode node = cluster.pick(0, null);
		String key = TestKeys.newKey();
		node.arm(CrashPoint.BEFORE_COMMIT);
		Attempt attempt = send(node, key, new NewOrder("lost", 7));
		assertThat(attempt.answered()).isFalse();
		assertThat(node.crashed()).isTrue();
		assertThat(ordersFor(key)).isEmpty();
		assertThat(ledger()).isEqualTo(new Ledger(0, 0));
		if (mode == Mode.LEASE) {
			assertThat(record(key)).as("reserved, never completed")
				.hasValueSatisfying((record) -> assertThat(record.state()).isEqualTo(RecordState.IN_PROGRESS));
		}
		else {
			assertThat(record(key)).as("nothing recorded").isEmpty();
		}
		// Without a crash the record is completed once the transaction has committed.
		String other = TestKeys.newKey();
		cluster.replace(node);
		Attempt placed = send(cluster.pick(0, node), other, new NewOrder("placed", 5));
		assertThat(placed.status()).isEqualTo(200);
		assertThat(ordersFor(other)).hasSize(1);
		assertThat(record(other)).hasValueSatisfying((record) -> {
			assertThat(record.state()).isEqualTo(RecordState.COMPLETED);
			assertThat(JSON.readValue(record.response().body(), PlacedOrder.class).id())
				.isEqualTo(ordersFor(other).get(0).id());
		});
	}

	private void trial(Mode mode, Cluster cluster, Counts counts, int trial, CrashPoint point, NewOrder order) {
		String key = TestKeys.newKey();
		String what = "trial " + trial + " (" + point + ", key " + key + ")";
		Ledger before = ledger();
		counts.trials++;
		CrashNode first = cluster.pick(trial, null);
		first.arm(point);
		double completedBefore = first.executions("completed");
		Attempt attempt = send(first, key, order);
		Attempt last;
		if (point == CrashPoint.NONE) {
			assertThat(attempt.status()).as(what).isEqualTo(200);
			assertThat(attempt.replayed()).as(what).isFalse();
			assertThat(attempt.delta("executed")).as(what).isEqualTo(1);
			// The control's retry on another node: the same answer, replayed.
			last = send(cluster.pick(trial + 1, first), key, order);
			assertThat(last.status()).as(what).isEqualTo(200);
			assertThat(last.body()).as(what).isEqualTo(attempt.body());
		}
		else {
			assertThat(attempt.answered()).as(what + ": a crashed node answers nothing useful").isFalse();
			assertThat(first.crashed()).as(what).isTrue();
			counts.noResponses++;
			assertThat(first.executions("completed") - completedBefore)
				.as(what + ": the completion had run before the crash")
				.isEqualTo(1);
			long crashedAt = System.nanoTime();
			cluster.replace(first);
			// What the crash left behind, before any retry.
			if (point == CrashPoint.BEFORE_COMMIT) {
				assertThat(ordersFor(key)).as(what + ": nothing committed").isEmpty();
				assertThat(ledger()).as(what).isEqualTo(before);
				if (mode == Mode.LEASE) {
					assertThat(record(key)).as(what + ": the completion was rolled back")
						.hasValueSatisfying((record) -> assertThat(record.state()).isEqualTo(RecordState.IN_PROGRESS));
				}
				else {
					assertThat(record(key)).as(what + ": the recording was rolled back").isEmpty();
				}
			}
			else {
				assertThat(ordersFor(key)).as(what).hasSize(1);
				assertThat(record(key)).as(what)
					.hasValueSatisfying((record) -> assertThat(record.state()).isEqualTo(RecordState.COMPLETED));
			}
			last = untilFinal(cluster, key, order, first, counts, what);
			counts.recoverySeconds.add((System.nanoTime() - crashedAt) / 1e9);
			if (point == CrashPoint.BEFORE_COMMIT) {
				assertThat(last.replayed()).as(what + ": the retry placed the order").isFalse();
				if (mode == Mode.LEASE) {
					assertThat(last.delta("taken_over")).as(what + ": once the dead owner's lease ran out")
						.isEqualTo(1);
				}
				else {
					assertThat(last.delta("executed")).as(what + ": no record, nothing in flight").isEqualTo(1);
				}
				counts.reExecutions++;
			}
		}
		if (point != CrashPoint.BEFORE_COMMIT) {
			assertThat(last.replayed()).as(what + ": a replay").isTrue();
			assertThat(last.delta("replayed")).as(what).isEqualTo(1);
			counts.replays++;
		}
		counts.effects += assertOneEffect(what, key, order, before, last.order());
	}

	/**
	 * Two first attempts of one key at once, on two nodes (record-after-success): both
	 * find no record and both run the operation; the first to record wins, the other's
	 * transaction is rolled back and it answers with the recorded result.
	 */
	private void race(Cluster cluster, Counts counts, int trial, NewOrder order) {
		String key = TestKeys.newKey();
		String what = "trial " + trial + " (race, key " + key + ")";
		Ledger before = ledger();
		counts.trials++;
		CrashNode one = cluster.pick(trial, null);
		CrashNode other = cluster.pick(trial + 1, one);
		double recorded = one.executions("completed") + other.executions("completed");
		double answeredRecorded = one.executions("answered_recorded") + other.executions("answered_recorded");
		CrashTestApplication.RACES.put(key, new CountDownLatch(2));
		Attempt first;
		Attempt second;
		try {
			CompletableFuture<Attempt> racing = CompletableFuture.supplyAsync(() -> send(other, key, order),
					this.racer);
			first = send(one, key, order);
			second = racing.join();
		}
		finally {
			CrashTestApplication.RACES.remove(key);
		}
		assertThat(first.status()).as(what + ": " + first.body()).isEqualTo(200);
		assertThat(second.status()).as(what + ": " + second.body()).isEqualTo(200);
		assertThat(first.delta("executed") + second.delta("executed")).as(what + ": both ran").isEqualTo(2);
		assertThat(one.executions("completed") + other.executions("completed") - recorded).as(what + ": one recorded")
			.isEqualTo(1);
		assertThat(one.executions("answered_recorded") + other.executions("answered_recorded") - answeredRecorded)
			.as(what + ": the other answered with the recorded result")
			.isEqualTo(1);
		assertThat(second.body()).as(what + ": one answer for both").isEqualTo(first.body());
		counts.effects += assertOneEffect(what, key, order, before, first.order());
		counts.raceLosers++;
	}

	/**
	 * The key's order is in the database once, it is the one answered, the ledger moved
	 * by its amount once, and the record is completed.
	 */
	private int assertOneEffect(String what, String key, NewOrder order, Ledger before, PlacedOrder answer) {
		List<PlacedOrder> orders = ordersFor(key);
		assertThat(orders).as(what + ": one order, and it is the one answered").containsExactly(answer);
		assertThat(answer.amount()).isEqualTo(order.amount());
		assertThat(ledger()).as(what + ": the ledger moved once")
			.isEqualTo(new Ledger(before.total() + order.amount(), before.orders() + 1));
		assertThat(record(key)).as(what)
			.hasValueSatisfying((record) -> assertThat(record.state()).isEqualTo(RecordState.COMPLETED));
		return orders.size();
	}

	/**
	 * Retries on the nodes other than {@code crashed} until a final answer: an I/O error
	 * or a {@code 5xx} is no answer, a {@code 409} in flight is retried after its
	 * {@code Retry-After}.
	 */
	private Attempt untilFinal(Cluster cluster, String key, NewOrder order, CrashNode crashed, Counts counts,
			String what) {
		long deadline = System.nanoTime() + TRIAL_DEADLINE.toNanos();
		for (int turn = 0;; turn++) {
			Attempt attempt = send(cluster.pick(turn, crashed), key, order);
			counts.retries++;
			if (attempt.status() == 200) {
				return attempt;
			}
			if (!attempt.answered()) {
				counts.noResponses++;
				sleep(Duration.ofMillis(50));
			}
			else if (attempt.status() == 409) {
				counts.inFlight++;
				sleep(attempt.retryAfter());
			}
			else {
				fail(what + ": unexpected answer " + attempt.status() + " " + attempt.body());
			}
			if (System.nanoTime() > deadline) {
				fail(what + ": no final answer within " + TRIAL_DEADLINE);
			}
		}
	}

	private static Attempt send(CrashNode node, String key, NewOrder order) {
		Map<String, Double> before = outcomes(node);
		HttpRequest request = HttpRequest.newBuilder(node.orders())
			.timeout(CLIENT_TIMEOUT)
			.header("Content-Type", "application/json")
			.header("Idempotency-Key", key)
			.POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(order)))
			.build();
		HttpResponse<String> response;
		try {
			response = CLIENT.send(request, HttpResponse.BodyHandlers.ofString());
		}
		catch (IOException ex) {
			response = null;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
		Map<String, Double> after = outcomes(node);
		Map<String, Double> deltas = new LinkedHashMap<>();
		after.forEach((outcome, count) -> deltas.put(outcome, count - before.get(outcome)));
		return new Attempt(node, response, deltas);
	}

	private static Map<String, Double> outcomes(CrashNode node) {
		Map<String, Double> counts = new LinkedHashMap<>();
		for (String outcome : List.of("executed", "taken_over", "replayed", "in_flight")) {
			counts.put(outcome, node.outcomes(outcome));
		}
		return counts;
	}

	private static void sleep(Duration duration) {
		try {
			Thread.sleep(duration.toMillis());
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private List<PlacedOrder> ordersFor(String key) {
		return this.jdbc.sql("SELECT id, idem_key, item, amount FROM crash_order WHERE idem_key = ? ORDER BY id")
			.param(key)
			.query((rs, row) -> new PlacedOrder(rs.getLong("id"), rs.getString("idem_key"), rs.getString("item"),
					rs.getInt("amount")))
			.list();
	}

	private Ledger ledger() {
		return this.jdbc.sql("SELECT total, orders FROM crash_ledger WHERE id = 1")
			.query((rs, row) -> new Ledger(rs.getLong("total"), rs.getInt("orders")))
			.single();
	}

	/**
	 * The key's record, read through the store (whichever scope the method door used).
	 */
	private Optional<IdempotencyRecord> record(String key) {
		String stored = IdempotencyEngine.recordId("", key, IdempotentCall.Door.METHOD).key();
		return this.jdbc.sql("SELECT scope FROM " + TABLE + " WHERE idem_key = ?")
			.param(stored)
			.query(String.class)
			.optional()
			.flatMap((scope) -> this.store.find(new RecordId(scope, stored)));
	}

	private Cluster cluster(Mode mode, boolean transactionalCompletion, int nodes) {
		Map<String, String> properties = new LinkedHashMap<>();
		properties.put("idempotency.mode", mode.property);
		properties.put("idempotency.store.jdbc.transactional-completion", String.valueOf(transactionalCompletion));
		// The shortest lease the start-up check accepts with a 1 s query timeout:
		// 250 ms + 1 s + 62.5 ms (a sweep) + 500 ms (a pause) < 2 s.
		properties.put("idempotency.lease", "2s");
		properties.put("idempotency.heartbeat-interval", "250ms");
		properties.put("idempotency.store.jdbc.query-timeout", "1s");
		properties.put("idempotency.in-flight.wait", "300ms");
		properties.put("idempotency.in-flight.retry-after", "1s");
		String name = this.database.name() + "-" + (transactionalCompletion ? "" : "sep-") + mode.shortName;
		Cluster cluster = new Cluster(name, nodes, this.database.url(), properties);
		this.clusters.add(cluster);
		return cluster;
	}

	/** {@code idempotency.mode}. */
	enum Mode {

		LEASE("lease", "lease"), RECORD_AFTER_SUCCESS("record-after-success", "ras");

		final String property;

		final String shortName;

		Mode(String property, String shortName) {
			this.property = property;
			this.shortName = shortName;
		}

	}

	/** What a trial does: crash its first node at a point, or race two first attempts. */
	enum Scenario {

		BEFORE_COMMIT(CrashPoint.BEFORE_COMMIT), AFTER_COMMIT(CrashPoint.AFTER_COMMIT), NONE(CrashPoint.NONE),

		/** Record-after-success only: two first attempts on two nodes at once. */
		RACE(CrashPoint.NONE);

		final CrashPoint point;

		Scenario(CrashPoint point) {
			this.point = point;
		}

	}

	record Ledger(long total, int orders) {
	}

	/** One request and what the node it went to counted for it. */
	record Attempt(CrashNode node, @Nullable HttpResponse<String> response, Map<String, Double> deltas) {

		/** A final or in-flight answer: not an I/O error and not a {@code 5xx}. */
		boolean answered() {
			return this.response != null && this.response.statusCode() < 500;
		}

		int status() {
			return (this.response != null) ? this.response.statusCode() : -1;
		}

		String body() {
			return (this.response != null) ? this.response.body() : "";
		}

		boolean replayed() {
			return this.response != null
					&& this.response.headers().firstValue(CrashTestApplication.REPLAYED_HEADER).isPresent();
		}

		Duration retryAfter() {
			Optional<String> header = (this.response != null) ? this.response.headers().firstValue("Retry-After")
					: Optional.empty();
			return Duration.ofSeconds(header.map(Long::parseLong).orElse(1L));
		}

		double delta(String outcome) {
			return this.deltas.get(outcome);
		}

		PlacedOrder order() {
			return JSON.readValue(body(), PlacedOrder.class);
		}

	}

	static final class Counts {

		int trials;

		int effects;

		int replays;

		int reExecutions;

		int noResponses;

		int inFlight;

		int retries;

		int raceLosers;

		final List<Double> recoverySeconds = new ArrayList<>();

		@Override
		public String toString() {
			String recovery = this.recoverySeconds.isEmpty() ? ""
					: String.format(" crash-to-final-answer=%.2f..%.2fs",
							this.recoverySeconds.stream().mapToDouble(Double::doubleValue).min().orElse(0),
							this.recoverySeconds.stream().mapToDouble(Double::doubleValue).max().orElse(0));
			return "trials=" + this.trials + " effects=" + this.effects + " replays=" + this.replays + " re-executions="
					+ this.reExecutions + " no-responses=" + this.noResponses + " in-flight=" + this.inFlight
					+ " retries=" + this.retries
					+ ((this.raceLosers > 0) ? " answered-recorded=" + this.raceLosers : "") + recovery;
		}

	}

	static final class Summary {

		final Mode mode;

		final Map<Scenario, Counts> counts = new EnumMap<>(Scenario.class);

		double seconds;

		int nodesStarted;

		Summary(Mode mode) {
			this.mode = mode;
			for (Scenario scenario : Scenario.values()) {
				if (scenario != Scenario.RACE || mode == Mode.RECORD_AFTER_SUCCESS) {
					this.counts.put(scenario, new Counts());
				}
			}
		}

		@Override
		public String toString() {
			StringBuilder line = new StringBuilder("[crash] mode=" + this.mode.property);
			this.counts.forEach((point, counts) -> line.append(" | ").append(point).append(": ").append(counts));
			return line.append(String.format(" | nodes started=%d, %.1f s", this.nodesStarted, this.seconds))
				.toString();
		}

	}

	/**
	 * Slots of nodes; a crashed node is closed and a fresh one started in its slot, in
	 * the background, while the trials go on with the others.
	 */
	static final class Cluster implements AutoCloseable {

		private final String prefix;

		private final String url;

		private final Map<String, String> properties;

		private final AtomicInteger started = new AtomicInteger();

		// One at a time: nodes start and close one by one anyway (CrashNode).
		private final ExecutorService starter = Executors.newSingleThreadExecutor((runnable) -> {
			Thread thread = new Thread(runnable, "crash-node-starter");
			thread.setDaemon(true);
			return thread;
		});

		private final List<CompletableFuture<CrashNode>> slots = new ArrayList<>();

		Cluster(String prefix, int nodes, String url, Map<String, String> properties) {
			this.prefix = prefix;
			this.url = url;
			this.properties = properties;
			for (int slot = 0; slot < nodes; slot++) {
				this.slots.add(startNode());
			}
		}

		private CompletableFuture<CrashNode> startNode() {
			String name = this.prefix + "-n" + this.started.incrementAndGet();
			return CompletableFuture.supplyAsync(() -> CrashNode.start(name, this.url, ADMIN_URL, this.properties),
					this.starter);
		}

		/**
		 * A started node other than {@code other}, chosen by {@code turn} among those
		 * ready; waits for one if none is.
		 */
		synchronized CrashNode pick(int turn, @Nullable CrashNode other) {
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
			while (true) {
				List<CrashNode> ready = new ArrayList<>();
				for (CompletableFuture<CrashNode> slot : this.slots) {
					if (slot.isDone()) {
						CrashNode node = slot.join();
						if (node != other) {
							ready.add(node);
						}
					}
				}
				if (!ready.isEmpty()) {
					return ready.get(Math.floorMod(turn, ready.size()));
				}
				if (System.nanoTime() > deadline) {
					throw new IllegalStateException("no node started within 120 s");
				}
				sleep(Duration.ofMillis(20));
			}
		}

		/** Closes a crashed node and starts a fresh one in its slot. */
		synchronized void replace(CrashNode crashed) {
			for (int slot = 0; slot < this.slots.size(); slot++) {
				CompletableFuture<CrashNode> node = this.slots.get(slot);
				if (node.isDone() && node.join() == crashed) {
					crashed.close();
					this.slots.set(slot, startNode());
					return;
				}
			}
			throw new IllegalStateException(crashed + " is not in the cluster");
		}

		int nodesStarted() {
			return this.started.get();
		}

		@Override
		public synchronized void close() {
			this.starter.shutdown();
			for (CompletableFuture<CrashNode> slot : this.slots) {
				try {
					slot.join().close();
				}
				catch (RuntimeException ex) {
					// A node that did not start has nothing to close.
				}
			}
		}

	}

}
