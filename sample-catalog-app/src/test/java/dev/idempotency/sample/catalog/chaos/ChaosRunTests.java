package dev.idempotency.sample.catalog.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.idempotency.sample.catalog.SampleCatalogApplication;
import dev.idempotency.test.chaos.Monkeys;
import dev.idempotency.test.http.RawHttp;
import dev.idempotency.test.launch.HttpNode;
import dev.idempotency.test.servers.FaultyTcpProxy;
import dev.idempotency.test.servers.JdbcTestDatabase;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Everything going wrong at once, then a check that every effect happened exactly once.
 * <p>
 * Two catalog nodes (JVMs of their own) share one PostgreSQL or MariaDB database (created
 * for the run, dropped after it) for the catalog, through a proxy that cuts the database
 * off now and then. The idempotency records are in that database too, or in a Redis
 * Cluster of the run's own whose primaries are killed and paused ({@link ChaosStore}).
 * Each node sits behind a proxy that loses random responses and cuts others off mid-way.
 * A monkey SIGKILLs a random node (and starts it again). Clients issue keyed operations
 * on their own namespaces (create table, append a snapshot with Iceberg's optimistic
 * requirement, rename, drop), each retried with its key on I/O errors and 5xx on either
 * node until it is answered. Afterwards the catalog must hold exactly what the clients
 * were told.
 * <p>
 * Short by default (part of the test suite: PostgreSQL in lease mode here, in
 * record-after-success mode in {@link PostgresRecordAfterSuccessChaosRunTests}, Redis
 * Cluster in lease mode in {@link RedisClusterChaosRunTests}, each a class of its own so
 * that the test JVMs run them side by side; with the records on the catalog's database it
 * asserts 0 re-executions); a long run of one store and mode:
 * {@code ./mvnw -B -o -pl sample-catalog-app -am test -Dtest=ChaosRunTests -Dsurefire.failIfNoSpecifiedTests=false -Dchaos.store=mariadb -Dchaos.mode=lease -Dchaos.operations=10000}.
 * Settings: {@code chaos.store} ({@code postgresql}, {@code mariadb},
 * {@code redis-cluster}; a comma-separated list), {@code chaos.mode} ({@code lease},
 * {@code record-after-success}; a list, {@code lease} when only the store is given),
 * {@code chaos.operations}, {@code chaos.clients}, {@code chaos.seed},
 * {@code chaos.lose-rate}, {@code chaos.cut-rate}, {@code chaos.replicas-to-ack}; the
 * figures go to standard output and to
 * {@code target/chaos/report-<store>-<mode>-<seed>.txt}; each client's calls and their
 * answers to {@code target/chaos/<run>/history-<client>.txt}.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ChaosRunTests {

	private static final ObjectMapper JSON = new ObjectMapper();

	/**
	 * The stores and modes {@code chaos.store} and {@code chaos.mode} name (every store
	 * named in every mode named; {@code postgresql} and {@code lease} when one of them is
	 * not given), or, with neither, the test suite's short run: PostgreSQL in lease mode
	 * (record-after-success in {@link PostgresRecordAfterSuccessChaosRunTests}).
	 */
	List<Arguments> runs() {
		String stores = System.getProperty("chaos.store", "");
		String modes = System.getProperty("chaos.mode", "");
		if (stores.isBlank() && modes.isBlank()) {
			return List.of(Arguments.of(ChaosStore.POSTGRESQL, ChaosMode.LEASE));
		}
		List<Arguments> runs = new ArrayList<>();
		for (ChaosStore store : named("chaos.store", stores.isBlank() ? "postgresql" : stores, ChaosStore.values(),
				ChaosStore::id)) {
			for (ChaosMode mode : named("chaos.mode", modes.isBlank() ? "lease" : modes, ChaosMode.values(),
					ChaosMode::id)) {
				runs.add(Arguments.of(store, mode));
			}
		}
		return runs;
	}

	private static <T> List<T> named(String property, String names, T[] values, Function<T, String> id) {
		return Arrays.stream(names.split(","))
			.map(name -> name.strip().toLowerCase(Locale.ROOT))
			.map(name -> Arrays.stream(values)
				.filter(value -> id.apply(value).equals(name))
				.findFirst()
				.orElseThrow(() -> new IllegalArgumentException(
						property + "=" + name + ": expected one of " + Arrays.toString(values))))
			.toList();
	}

	@ParameterizedTest(name = "{0}, {1}")
	@MethodSource("runs")
	void everyAcknowledgedOperationTakesEffectExactlyOnce(ChaosStore store, ChaosMode mode) throws Exception {
		int operations = Integer.getInteger("chaos.operations", store.shortRunOperations());
		int clientCount = Integer.getInteger("chaos.clients", 4);
		long seed = Long.getLong("chaos.seed", System.nanoTime());
		double loseRate = Double.parseDouble(System.getProperty("chaos.lose-rate", "0.05"));
		double cutRate = Double.parseDouble(System.getProperty("chaos.cut-rate", "0.03"));
		Random random = new Random(seed);
		String runName = "chaos_" + switch (store) {
			case POSTGRESQL -> "pg";
			case MARIADB -> "my";
			case REDIS_CLUSTER -> "rc";
		} + switch (mode) {
			case LEASE -> "l";
			case RECORD_AFTER_SUCCESS -> "r";
		} + "_" + Long.toHexString(seed & 0xFFFFFFFFFFL);
		Path runDirectory = Files.createDirectories(Path.of("target", "chaos", runName));
		ChaosStore.CatalogServer server = store.catalogServer();
		JdbcTestDatabase database = server.database(runName).create();
		List<HttpNode> nodes = new ArrayList<>();
		List<FaultyTcpProxy> entries = new ArrayList<>();
		long started = System.nanoTime();
		long startedMillis = System.currentTimeMillis();
		Monkeys monkeys = new Monkeys(startedMillis);
		try (ChaosStore.Records records = store.open(mode, runName + ":", new Random(random.nextLong()));
				FaultyTcpProxy databaseLink = new FaultyTcpProxy(database.port(), 0, 0, random.nextLong())) {
			List<String> arguments = new ArrayList<>(
					List.of("--spring.datasource.url=" + server.url(database, databaseLink.port()),
							"--spring.datasource.username=" + database.user(), "--spring.datasource.password=",
							"--spring.datasource.hikari.maximum-pool-size=6",
							"--spring.datasource.hikari.connection-timeout=3000",
							// A node started during a database cut waits for the database
							// instead
							// of exiting.
							"--spring.datasource.hikari.initialization-fail-timeout=20000",
							"--catalog.warehouse=" + runDirectory.resolve("warehouse").toAbsolutePath(),
							"--idempotency.lease=PT4S", "--idempotency.heartbeat-interval=PT1S",
							// INFO for the starter: a takeover after a lease ran out is
							// logged at
							// INFO.
							"--logging.level.root=WARN", "--logging.level.dev.idempotency=INFO"));
			arguments.addAll(records.nodeArguments());
			for (String name : List.of("node-a", "node-b")) {
				HttpNode node = new HttpNode(SampleCatalogApplication.class, name, "/v1/config", arguments,
						runDirectory.resolve(name + ".log"));
				nodes.add(node);
				node.start();
				entries.add(new FaultyTcpProxy(node.port(), loseRate, cutRate, random.nextLong()));
			}
			List<Integer> entryPorts = entries.stream().map(FaultyTcpProxy::port).toList();
			List<ChaosClient> clients = new ArrayList<>();
			List<Thread> threads = new ArrayList<>();
			for (int i = 0; i < clientCount; i++) {
				ChaosClient client = new ChaosClient("c" + i, operations / clientCount, random.nextLong(), entryPorts,
						120_000, startedMillis);
				clients.add(client);
				Thread thread = new Thread(client, "chaos-client-" + i);
				threads.add(thread);
				thread.start();
			}
			AtomicInteger kills = monkeys.startKiller(nodes, new Random(random.nextLong()));
			AtomicInteger databaseCuts = monkeys.startCutter(databaseLink, "database", new Random(random.nextLong()));
			if (records.hasOwnFaults()) {
				monkeys.start("chaos-store", () -> records.injectFault(monkeys));
			}
			for (Thread thread : threads) {
				thread.join();
			}
			monkeys.stop();
			long seconds = (System.nanoTime() - started) / 1_000_000_000;

			Verdict verdict = verify(nodes.get(0).port(), clients);
			int done = clients.stream().mapToInt(client -> client.done).sum();
			int attempts = clients.stream().mapToInt(client -> client.attempts).sum();
			int replays = clients.stream().mapToInt(client -> client.replays).sum();
			List<String> wrong = clients.stream().flatMap(client -> client.wrongAnswers.stream()).toList();
			List<String> unanswered = clients.stream().flatMap(client -> client.unanswered.stream()).toList();
			List<String> invalid = clients.stream().flatMap(client -> client.invalidBodies.stream()).toList();
			long lost = entries.stream().mapToLong(entry -> entry.lostResponses()).sum();
			long cut = entries.stream().mapToLong(entry -> entry.cutResponses()).sum();
			String storeFaults = records.faultFigures();
			Map<String, List<String>> logLinesOfWrong = new LinkedHashMap<>();
			Map<ReExecutionCause, Integer> causes = new EnumMap<>(ReExecutionCause.class);
			for (String line : wrong) {
				List<String> logLines = nodeLogLinesOf(line, nodes);
				logLinesOfWrong.put(line, logLines);
				causes.merge(ReExecutionCause.of(line, logLines), 1, Integer::sum);
			}
			String report = String.join("\n",
					"chaos run (%s, %s): seed %d, %d clients, %d operations in %d s (2 nodes; %s)".formatted(store,
							mode, seed, clientCount, done, seconds, records.description()),
					"faults: %d responses lost, %d responses cut mid-way, %d node kills (SIGKILL, restarted), %d database cuts (%s; %d connections refused)%s"
						.formatted(lost, cut, kills.get(), databaseCuts.get(),
								records.hasOwnFaults() ? "the catalog" : "the catalog and the records",
								databaseLink.refusedConnections(), storeFaults.isEmpty() ? "" : ", " + storeFaults),
					"requests: %d attempts for %d operations (%d retries), %d answers replayed".formatted(attempts,
							done, attempts - done, replays),
					"re-executions (a client told 'already exists', 'does not exist' or 'commit failed' of its own operation; target 0): %d %s"
						.formatted(wrong.size(), causes),
					"unanswered: %d; bodies that are not JSON: %d".formatted(unanswered.size(), invalid.size()),
					"catalog: %d tables, %d snapshots; acknowledged but missing: %d; applied twice or never asked for: %d; appends applied although told failed: %d"
						.formatted(verdict.tables, verdict.snapshots, verdict.missing.size(), verdict.unexpected.size(),
								verdict.appliedButToldFailed))
					+ "\n";
			StringBuilder details = new StringBuilder(report);
			logLinesOfWrong.forEach((line, logLines) -> {
				details.append("re-executed (")
					.append(ReExecutionCause.of(line, logLines))
					.append("): ")
					.append(line)
					.append('\n');
				logLines.forEach(log -> details.append("    ").append(log).append('\n'));
			});
			unanswered.forEach(line -> details.append("unanswered: ").append(line).append('\n'));
			invalid.forEach(line -> details.append("not JSON: ").append(line).append('\n'));
			verdict.missing.forEach(line -> details.append("missing: ").append(line).append('\n'));
			verdict.unexpected.forEach(line -> details.append("unexpected: ").append(line).append('\n'));
			monkeys.failures()
				.forEach(failure -> details.append("fault not injected or undone: ").append(failure).append('\n'));
			details.append("timeline of the faults other than lost and cut responses:\n");
			monkeys.timeline().forEach(line -> details.append("  ").append(line).append('\n'));
			Files.writeString(Path.of("target", "chaos", "report-" + store + "-" + mode + "-" + seed + ".txt"),
					details);
			for (ChaosClient client : clients) {
				Files.write(runDirectory.resolve("history-" + client.namespace() + ".txt"), client.history);
			}
			System.out.println(details);

			assertThat(monkeys.failures()).as("faults that could not be injected or undone").isEmpty();
			assertThat(unanswered).as("operations without a final answer").isEmpty();
			assertThat(invalid).as("answers whose body is not what the handler produced").isEmpty();
			assertThat(verdict.missing).as("acknowledged operations missing from the catalog").isEmpty();
			assertThat(verdict.unexpected).as("effects no client was told of (duplicates)").isEmpty();
			// A re-execution is answered from the catalog's own state (409 AlreadyExists,
			// 404, 409 CommitFailed) and never applies twice; how often it happens is the
			// figure reported above.
			assertThat(wrong).as("answers other than a re-execution's").allMatch(ChaosRunTests::isReExecution);
			assertThat(done).isEqualTo(clientCount * (operations / clientCount));
			if (records.atomic()) {
				// The records commit with the catalog's rows: an operation either took
				// effect with its record (a retry is replayed) or not at all (a retry
				// runs
				// it for the first time). Checked on the nodes' logs: the door's
				// transactions were begun, and the store joined them.
				assertThat(nodeLogLines(nodes, "Creating new transaction with name [idempotency]"))
					.as("transactions begun by the idempotency door")
					.isNotEmpty();
				assertThat(nodeLogLines(nodes, "Atomic completion is off"))
					.as("the store not joining the door's transactions")
					.isEmpty();
				assertThat(wrong).as("re-executions with atomic completion").isEmpty();
				assertThat(verdict.appliedButToldFailed)
					.as("appends applied although their client was told they failed")
					.isZero();
			}
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
	 * Why an operation ran a second time, read from its attempt trail and the nodes' log
	 * lines of its key. A guide for the report, not a proof: the trail and the timeline
	 * are printed with it.
	 */
	enum ReExecutionCause {

		/**
		 * The owner could not write the record's completion: it stayed in progress, and
		 * was taken over after its lease.
		 */
		STORE_FAILED_AT_COMPLETION,

		/**
		 * The owner went away before completing (its node killed, or its lease lost), and
		 * another request took the key over.
		 */
		OWNER_GONE_BEFORE_COMPLETION,

		/**
		 * A single attempt: inside one request, the catalog's JDBC client ran a statement
		 * again on a new connection after the database cut the first one, whose commit
		 * had been applied.
		 */
		CATALOG_STATEMENT_RETRIED,

		/**
		 * The catalog answered 500 although its commit had been applied (the commit's
		 * acknowledgement was lost, or a read after it failed): the 500 released the key,
		 * and a retry ran again.
		 */
		CATALOG_ERROR_AFTER_COMMIT,

		/**
		 * None of the above: no takeover, no store error, no catalog error (a record
		 * lost?).
		 */
		UNEXPLAINED;

		static ReExecutionCause of(String reported, List<String> logLines) {
			if (logLines.stream().anyMatch(line -> line.contains("Could not store the response"))) {
				return STORE_FAILED_AT_COMPLETION;
			}
			if (logLines.stream().anyMatch(line -> line.contains("Took over idempotency key"))) {
				return OWNER_GONE_BEFORE_COMPLETION;
			}
			List<String> attempts = reported.lines().filter(line -> line.matches("\\s+[0-9.]+ s node-.*")).toList();
			if (attempts.size() == 1) {
				return CATALOG_STATEMENT_RETRIED;
			}
			if (attempts.stream().anyMatch(line -> line.contains(": 500 "))) {
				return CATALOG_ERROR_AFTER_COMMIT;
			}
			return UNEXPLAINED;
		}

	}

	/**
	 * The nodes' log lines that name the key of a reported operation
	 * ({@code key=<key>:}).
	 */
	private static List<String> nodeLogLinesOf(String reported, List<HttpNode> nodes) {
		Matcher key = Pattern.compile("key=([0-9a-f-]{36})").matcher(reported);
		return key.find() ? nodeLogLines(nodes, key.group(1)) : List.of();
	}

	/** The nodes' log lines that contain {@code text}. */
	private static List<String> nodeLogLines(List<HttpNode> nodes, String text) {
		return nodes.stream().flatMap((node) -> node.logLines(text).stream()).toList();
	}

	/** The answer a second run of the client's own operation gets from the catalog. */
	private static boolean isReExecution(String wrongAnswer) {
		return wrongAnswer.contains("told 409")
				&& (wrongAnswer.contains("AlreadyExistsException") || wrongAnswer.contains("CommitFailedException"))
				|| wrongAnswer.contains("told 404") && wrongAnswer.contains("NoSuchTableException");
	}

	/**
	 * Compares the catalog, read from one node directly, with what the clients were told.
	 */
	private static Verdict verify(int port, List<ChaosClient> clients) throws IOException, InterruptedException {
		Verdict verdict = new Verdict();
		Set<String> expectedNamespaces = new TreeSet<>();
		clients.forEach(client -> expectedNamespaces.add(client.namespace()));
		Set<String> namespaces = new TreeSet<>();
		for (JsonNode namespace : get(port, "/v1/namespaces").path("namespaces")) {
			namespaces.add(namespace.get(0).asText());
		}
		if (!namespaces.equals(expectedNamespaces)) {
			verdict.unexpected.add("namespaces " + namespaces + ", expected " + expectedNamespaces);
		}
		for (ChaosClient client : clients) {
			Set<String> tables = new HashSet<>();
			for (JsonNode identifier : get(port, "/v1/namespaces/" + client.namespace() + "/tables")
				.path("identifiers")) {
				tables.add(identifier.path("name").asText());
			}
			verdict.tables += tables.size();
			for (String table : client.tables.keySet()) {
				if (!tables.contains(table)) {
					verdict.missing.add(client.namespace() + "." + table + " (the client was told it exists)");
				}
			}
			for (String table : tables) {
				ChaosClient.TableState told = client.tables.get(table);
				if (told == null) {
					verdict.unexpected.add(client.namespace() + "." + table + " (no client was told it exists)");
					continue;
				}
				int snapshots = get(port, "/v1/namespaces/" + client.namespace() + "/tables/" + table).path("metadata")
					.path("snapshots")
					.size();
				verdict.snapshots += snapshots;
				if (snapshots < told.acknowledgedAppends) {
					verdict.missing.add(client.namespace() + "." + table + ": " + snapshots + " snapshots, "
							+ told.acknowledgedAppends + " appends acknowledged");
				}
				else if (snapshots > told.acknowledgedAppends + told.unacknowledgedAppends) {
					verdict.unexpected.add(client.namespace() + "." + table + ": " + snapshots + " snapshots, "
							+ told.acknowledgedAppends + " appends acknowledged, " + told.unacknowledgedAppends
							+ " answered as failed: a commit applied twice");
				}
				verdict.appliedButToldFailed += snapshots - told.acknowledgedAppends;
			}
		}
		return verdict;
	}

	/**
	 * A read for the check, tried again while a pooled connection broken by the last cut
	 * is replaced.
	 */
	private static JsonNode get(int port, String path) throws IOException, InterruptedException {
		RawHttp.Answer answer = null;
		for (int attempt = 0; attempt < 20; attempt++) {
			answer = RawHttp.exchange(port, "GET", path, null, null);
			if (answer.status() == 200) {
				return JSON.readTree(answer.body());
			}
			Thread.sleep(250);
		}
		throw new IllegalStateException("GET " + path + " answered " + answer.status() + ": " + answer.body());
	}

	private static final class Verdict {

		final List<String> missing = new ArrayList<>();

		final List<String> unexpected = new ArrayList<>();

		int tables;

		int snapshots;

		/**
		 * Appends that took effect although their client was answered that they had
		 * failed.
		 */
		int appliedButToldFailed;

	}

}
