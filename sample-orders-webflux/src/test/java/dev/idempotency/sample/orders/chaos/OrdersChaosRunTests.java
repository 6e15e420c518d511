package dev.idempotency.sample.orders.chaos;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.sample.orders.OrdersApplication;
import dev.idempotency.sample.orders.chaos.OrdersChaosClient.Operation;
import dev.idempotency.test.chaos.Monkeys;
import dev.idempotency.test.launch.HttpNode;
import dev.idempotency.test.servers.FaultyTcpProxy;
import dev.idempotency.test.servers.JdbcTestDatabase;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The reactive sample under everything going wrong at once, then a check in SQL that
 * every order was created exactly as often as its client was told.
 * <p>
 * Two nodes of the sample (JVMs of their own, WebFlux and R2DBC) share one PostgreSQL
 * database created for the run (dropped after it), the orders and the idempotency records
 * in it through the same {@code ConnectionFactory}, so with atomic completion: the
 * handler's insert joins the door's reactive transaction, and the record commits with it.
 * The database is reached through a proxy that cuts every connection now and then; each
 * node sits behind a proxy that loses random responses and cuts others off mid-way; a
 * monkey SIGKILLs a random node and starts it again. Clients create orders, each with a
 * key of its own, retried with that key ({@link OrdersChaosClient}). Afterwards, from the
 * database: no order twice (a re-execution), none missing of those acknowledged, the
 * acknowledged id the one in the table, none of those the client was told failed (applied
 * though told failed), and for each acknowledged order its record {@code COMPLETED} by
 * the very transaction that inserted the order (PostgreSQL's {@code xmin} of both rows):
 * the proof that the insert joined the door's transaction.
 * <p>
 * Short by default: part of the test suite, {@value #SHORT_RUN_SECONDS} s of operations
 * in lease and in record-after-success mode (the default configuration's 30 s lease would
 * keep a killed node's keys in flight longer than such a run). A long run, with every
 * configuration of {@link OrdersChaosConfiguration}:
 * {@code ./mvnw -B -o -pl sample-orders-webflux -am test -Dtest=OrdersChaosRunTests -Dsurefire.failIfNoSpecifiedTests=false -Dchaos.configuration=default,lease,record-after-success -Dchaos.seconds=120}.
 * Settings: {@code chaos.configuration} ({@code default}, {@code lease},
 * {@code record-after-success}; a comma-separated list), {@code chaos.seconds} (how long
 * the clients start operations, per configuration), {@code chaos.clients},
 * {@code chaos.seed}, {@code chaos.lose-rate}, {@code chaos.cut-rate}; the figures go to
 * standard output and to {@code target/chaos/report-orders-<configuration>-<seed>.txt},
 * each client's operations to {@code target/chaos/<run>/history-<client>.txt}, the nodes'
 * logs beside them.
 */
class OrdersChaosRunTests {

	private static final int SHORT_RUN_SECONDS = 12;

	static List<OrdersChaosConfiguration> configurations() {
		String names = System.getProperty("chaos.configuration", "");
		if (names.isBlank()) {
			return List.of(OrdersChaosConfiguration.LEASE, OrdersChaosConfiguration.RECORD_AFTER_SUCCESS);
		}
		return Arrays.stream(names.split(","))
			.map((name) -> name.strip().toLowerCase(Locale.ROOT))
			.map((name) -> Arrays.stream(OrdersChaosConfiguration.values())
				.filter((configuration) -> configuration.id().equals(name))
				.findFirst()
				.orElseThrow(() -> new IllegalArgumentException("chaos.configuration=" + name + ": expected one of "
						+ Arrays.toString(OrdersChaosConfiguration.values()))))
			.toList();
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("configurations")
	void everyAcknowledgedOrderIsCreatedExactlyOnce(OrdersChaosConfiguration configuration) throws Exception {
		int runSeconds = Integer.getInteger("chaos.seconds", SHORT_RUN_SECONDS);
		int clientCount = Integer.getInteger("chaos.clients", 4);
		long seed = Long.getLong("chaos.seed", System.nanoTime());
		double loseRate = Double.parseDouble(System.getProperty("chaos.lose-rate", "0.05"));
		double cutRate = Double.parseDouble(System.getProperty("chaos.cut-rate", "0.03"));
		Random random = new Random(seed);
		String runName = "chaos_orders_" + configuration.name().toLowerCase(Locale.ROOT) + "_"
				+ Long.toHexString(seed & 0xFFFFFFFFFFL);
		Path runDirectory = Files.createDirectories(Path.of("target", "chaos", runName));
		JdbcTestDatabase database = JdbcTestDatabase.postgresDatabase(runName).create();
		List<HttpNode> nodes = new ArrayList<>();
		List<FaultyTcpProxy> entries = new ArrayList<>();
		long startedMillis = System.currentTimeMillis();
		Monkeys monkeys = new Monkeys(startedMillis);
		try (FaultyTcpProxy databaseLink = new FaultyTcpProxy(database.port(), 0, 0, random.nextLong())) {
			List<String> arguments = new ArrayList<>(
					List.of("--spring.r2dbc.url=" + database.r2dbcUrl(databaseLink.port()) + "?connectTimeout=PT3S",
							"--spring.r2dbc.username=" + database.user(), "--spring.r2dbc.password=",
							"--spring.r2dbc.pool.max-acquire-time=PT3S",
							// Up once started, whether the database is reachable or not.
							"--management.endpoint.health.probes.enabled=true",
							// INFO for the starter: a takeover after a lease ran out is
							// logged at
							// INFO.
							"--logging.level.root=WARN", "--logging.level.dev.idempotency=INFO"));
			arguments.addAll(configuration.nodeArguments());
			for (String name : List.of("node-a", "node-b")) {
				nodes.add(new HttpNode(OrdersApplication.class, name, "/actuator/health/liveness", arguments,
						runDirectory.resolve(name + ".log")));
			}
			// One after the other: two CREATE TABLE IF NOT EXISTS of one table at once
			// can
			// both create it on PostgreSQL, and the second fails (a node exited with
			// "duplicate key value violates unique constraint
			// pg_type_typname_nsp_index").
			for (HttpNode node : nodes) {
				node.start();
			}
			for (HttpNode node : nodes) {
				entries.add(new FaultyTcpProxy(node.port(), loseRate, cutRate, random.nextLong()));
			}
			List<Integer> entryPorts = entries.stream().map(FaultyTcpProxy::port).toList();
			long started = System.nanoTime();
			long clientsEnd = System.currentTimeMillis() + runSeconds * 1000L;
			List<OrdersChaosClient> clients = new ArrayList<>();
			List<Thread> threads = new ArrayList<>();
			for (int i = 0; i < clientCount; i++) {
				OrdersChaosClient client = new OrdersChaosClient("c" + i, clientsEnd, random.nextLong(), entryPorts,
						120_000, startedMillis);
				clients.add(client);
				Thread thread = new Thread(client, "chaos-client-" + i);
				threads.add(thread);
				thread.start();
			}
			AtomicInteger kills = monkeys.startKiller(nodes, new Random(random.nextLong()));
			AtomicInteger databaseCuts = monkeys.startCutter(databaseLink, "database", new Random(random.nextLong()));
			for (Thread thread : threads) {
				thread.join();
			}
			monkeys.stop();
			long seconds = (System.nanoTime() - started) / 1_000_000_000;

			List<Operation> all = clients.stream().flatMap((client) -> client.operations.stream()).toList();
			Verdict verdict = verify(database, all);
			int attempts = clients.stream().mapToInt((client) -> client.attempts).sum();
			long replays = all.stream().filter((operation) -> operation.replayed).count();
			long acknowledged = all.stream().filter(Operation::acknowledged).count();
			Map<String, Long> toldFailed = new HashMap<>();
			all.stream()
				.filter((operation) -> !operation.acknowledged())
				.forEach((operation) -> toldFailed.merge((operation.status == 0) ? "gave up" : "" + operation.status,
						1L, Long::sum));
			long lost = entries.stream().mapToLong(FaultyTcpProxy::lostResponses).sum();
			long cut = entries.stream().mapToLong(FaultyTcpProxy::cutResponses).sum();
			List<String> takeovers = nodes.stream()
				.flatMap((node) -> node.logLines("Took over idempotency key").stream())
				.toList();
			String report = String.join("\n",
					"reactive chaos run (%s): seed %d, %d clients, %d operations in %d s (2 nodes, WebFlux and R2DBC PostgreSQL, the records on the orders' ConnectionFactory: atomic completion)"
						.formatted(configuration, seed, clientCount, all.size(), seconds),
					"faults: %d responses lost, %d responses cut mid-way, %d node kills (SIGKILL, restarted), %d database cuts (%d connections refused)"
						.formatted(lost, cut, kills.get(), databaseCuts.get(), databaseLink.refusedConnections()),
					"requests: %d attempts for %d operations (%d retries), %d answers replayed, %d keys taken over after a lease"
						.formatted(attempts, all.size(), attempts - all.size(), replays, takeovers.size()),
					"answers: %d created (201), told failed: %s".formatted(acknowledged, toldFailed),
					"re-executions (orders created more than once; target 0): %d".formatted(verdict.reExecuted.size()),
					"applied though told failed (target 0): %d".formatted(verdict.appliedToldFailed.size()),
					"acknowledged but missing: %d; answered with another order than the one created: %d; orders no operation asked for: %d"
						.formatted(verdict.missing.size(), verdict.wrongAnswer.size(), verdict.unexpected.size()),
					"acknowledged orders whose record was completed by the order's own transaction: %d of %d; records left in progress (a release that failed): %d, %d of them within their lease"
						.formatted(verdict.sameTransaction, acknowledged, verdict.inProgress, verdict.leaseRunning))
					+ "\n";
			StringBuilder details = new StringBuilder(report);
			verdict.reExecuted.forEach((line) -> details.append("re-executed: ").append(line).append('\n'));
			verdict.appliedToldFailed
				.forEach((line) -> details.append("applied though told failed: ").append(line).append('\n'));
			verdict.missing.forEach((line) -> details.append("missing: ").append(line).append('\n'));
			verdict.wrongAnswer.forEach((line) -> details.append("wrong answer: ").append(line).append('\n'));
			verdict.unexpected.forEach((line) -> details.append("unexpected: ").append(line).append('\n'));
			verdict.notAtomic
				.forEach((line) -> details.append("not in the order's transaction: ").append(line).append('\n'));
			all.stream()
				.filter((operation) -> !operation.acknowledged())
				.forEach((operation) -> details.append("told failed: ").append(operation.withTrail()).append('\n'));
			monkeys.failures()
				.forEach((failure) -> details.append("fault not injected or undone: ").append(failure).append('\n'));
			details.append("timeline of the node kills and database cuts:\n");
			monkeys.timeline().forEach((line) -> details.append("  ").append(line).append('\n'));
			Files.writeString(Path.of("target", "chaos", "report-orders-" + configuration + "-" + seed + ".txt"),
					details);
			for (OrdersChaosClient client : clients) {
				Files.write(runDirectory.resolve("history-c" + clients.indexOf(client) + ".txt"),
						client.operations.stream().map(Operation::withTrail).toList());
			}
			System.out.println(details);

			assertThat(monkeys.failures()).as("faults that could not be injected or undone").isEmpty();
			assertThat(kills).as("node kills").hasPositiveValue();
			assertThat(verdict.reExecuted).as("orders created more than once").isEmpty();
			assertThat(verdict.appliedToldFailed).as("orders created although their client was told it failed")
				.isEmpty();
			assertThat(verdict.missing).as("acknowledged orders missing").isEmpty();
			assertThat(verdict.wrongAnswer).as("answers naming another order than the one created").isEmpty();
			assertThat(verdict.unexpected).as("orders no operation asked for").isEmpty();
			assertThat(verdict.notAtomic).as("acknowledged orders whose record did not commit with them").isEmpty();
			assertThat(all).as("operations given up (a key stuck in flight)")
				.noneMatch((operation) -> operation.status == 0);
		}
		finally {
			monkeys.stop();
			for (HttpNode node : nodes) {
				node.close();
			}
			for (FaultyTcpProxy entry : entries) {
				entry.close();
			}
			database.drop();
		}
	}

	/**
	 * Reads the orders and the records straight from PostgreSQL (not through the link)
	 * and compares them with what each operation's client was told.
	 */
	private static Verdict verify(JdbcTestDatabase database, List<Operation> operations) throws SQLException {
		Map<String, List<long[]>> ordersByItem = new HashMap<>();
		Map<Long, String> orderTransactions = new HashMap<>();
		Map<String, String[]> records = new HashMap<>();
		try (HikariDataSource dataSource = database.dataSource(1);
				Connection connection = dataSource.getConnection();
				Statement statement = connection.createStatement()) {
			try (ResultSet rows = statement.executeQuery("SELECT id, item, quantity, xmin::text FROM orders")) {
				while (rows.next()) {
					ordersByItem.computeIfAbsent(rows.getString(2), (item) -> new ArrayList<>())
						.add(new long[] { rows.getLong(1), rows.getInt(3) });
					orderTransactions.put(rows.getLong(1), rows.getString(4));
				}
			}
			try (ResultSet rows = statement
				.executeQuery("SELECT idem_key, state, xmin::text, lease_expires_at > now() FROM idempotency_record")) {
				while (rows.next()) {
					records.put(rows.getString(1),
							new String[] { rows.getString(2), rows.getString(3), String.valueOf(rows.getBoolean(4)) });
				}
			}
		}
		Verdict verdict = new Verdict();
		verdict.inProgress = (int) records.values().stream().filter((record) -> !"COMPLETED".equals(record[0])).count();
		verdict.leaseRunning = (int) records.values()
			.stream()
			.filter((record) -> !"COMPLETED".equals(record[0]) && "true".equals(record[2]))
			.count();
		Set<String> asked = new HashSet<>();
		for (Operation operation : operations) {
			asked.add(operation.item);
			List<long[]> orders = ordersByItem.getOrDefault(operation.item, List.of());
			String what = operation.withTrail();
			if (orders.size() > 1) {
				verdict.reExecuted.add(orders.size() + " orders: " + what);
			}
			if (!operation.acknowledged()) {
				if (!orders.isEmpty()) {
					verdict.appliedToldFailed.add(what);
				}
				continue;
			}
			if (orders.isEmpty()) {
				verdict.missing.add(what);
				continue;
			}
			long[] order = orders.get(0);
			if (orders.size() == 1 && (operation.answeredId == null || order[0] != operation.answeredId
					|| order[1] != operation.quantity || !operation.body.contains("\"" + operation.item + "\""))) {
				verdict.wrongAnswer.add("order " + order[0] + " of quantity " + order[1] + ", answered "
						+ operation.body + ": " + what);
			}
			String[] record = records.get(operation.key);
			String orderTransaction = orderTransactions.get(order[0]);
			if (record != null && "COMPLETED".equals(record[0]) && record[1].equals(orderTransaction)) {
				verdict.sameTransaction++;
			}
			else {
				verdict.notAtomic
					.add("record " + ((record != null) ? record[0] + " by transaction " + record[1] : "none")
							+ ", order by transaction " + orderTransaction + ": " + what);
			}
		}
		ordersByItem.keySet()
			.stream()
			.filter((item) -> !asked.contains(item))
			.forEach((item) -> verdict.unexpected.add(item));
		return verdict;
	}

	private static final class Verdict {

		final List<String> reExecuted = new ArrayList<>();

		final List<String> appliedToldFailed = new ArrayList<>();

		final List<String> missing = new ArrayList<>();

		final List<String> wrongAnswer = new ArrayList<>();

		final List<String> unexpected = new ArrayList<>();

		final List<String> notAtomic = new ArrayList<>();

		int sameTransaction;

		/** Records left in progress (their owner failed and could not release them). */
		int inProgress;

		/** Of those, the ones whose lease has not run out yet. */
		int leaseRunning;

	}

}
