package dev.idempotency.sample.catalog.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntFunction;
import java.util.stream.Stream;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.sample.catalog.SampleCatalogApplication;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.test.servers.JdbcTestDatabase;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import org.jspecify.annotations.Nullable;

import org.aopalliance.intercept.MethodInterceptor;

import org.springframework.aop.framework.ProxyFactory;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.ScanOptions;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * HTTP load driver: starts the sample catalog on a random port once per idempotency store
 * (the catalog itself always on an in-memory H2 database, so only the store varies),
 * drives it with {@link HttpClient} from N threads, and prints a Markdown table.
 * createNamespace with and without a key: a calibration run of {@code bench.seconds}
 * without a key sets the number of requests, then each side sends exactly that many,
 * alternating AB BA ..., each from an emptied catalog (the catalog's own cost grows with
 * its number of namespaces). createTable first execution and replay:
 * {@code bench.seconds} each.
 * <p>
 * Run with {@code ./mvnw -B -Pbench -DskipTests verify} (see docs/benchmarks.md). System
 * properties: {@code bench.stores} (memory,h2,postgresql,redis), {@code bench.clients}
 * (1,16), {@code bench.seconds} per measured phase (10), {@code bench.warmup} seconds
 * (5), {@code bench.rounds} alternations of unprotected/protected (2), {@code bench.out}
 * (a Markdown file for the results). Load goes to 127.0.0.1 only. PostgreSQL gets a
 * schema (a database where the catalog is on it too) of the run's own, Redis a key prefix
 * {@code idem_bench_<random>}; both are removed at the end.
 */
public final class CatalogLoadBenchmark {

	private static final String PG_ADMIN_URL = "jdbc:postgresql://127.0.0.1:5432/test";

	private static final String TABLE_REQUEST = resource("create-table-request.json");

	private final HttpClient http = HttpClient.newBuilder()
		.version(HttpClient.Version.HTTP_1_1)
		.connectTimeout(Duration.ofSeconds(5))
		.build();

	private final AtomicLong names = new AtomicLong();

	private final int seconds = Integer.getInteger("bench.seconds", 10);

	private final int warmup = Integer.getInteger("bench.warmup", 5);

	private final int rounds = Integer.getInteger("bench.rounds", 2);

	private final int pairs = Integer.getInteger("bench.pairs", 5);

	/** Prints each phase's CPU per application thread group (bench.cpu.detail=true). */
	private static final boolean DETAIL = Boolean.getBoolean("bench.cpu.detail");

	private final CpuAccounting cpu = Boolean.getBoolean("bench.pin") ? CpuAccounting.pinned("1", "0")
			: CpuAccounting.unpinned();

	private final List<Integer> clients = Arrays.stream(System.getProperty("bench.clients", "1,16").split(","))
		.map(String::strip)
		.map(Integer::valueOf)
		.toList();

	private final StringBuilder report = new StringBuilder();

	/**
	 * CPU and wall time of the store calls made on request threads (heartbeats excluded:
	 * none here).
	 */
	private final StoreCallMeter storeCalls = new StoreCallMeter();

	private URI base;

	private JdbcClient catalogDb;

	public static void main(String[] args) throws Exception {
		CatalogLoadBenchmark benchmark = new CatalogLoadBenchmark();
		try {
			benchmark.run();
		}
		finally {
			benchmark.cpu.close();
		}
		System.exit(0);
	}

	private void run() throws Exception {
		List<String> stores = list(System.getProperty("bench.stores", "memory,h2,postgresql,redis"));
		line("# HTTP benchmark of the sample catalog, " + LocalDateTime.now().withNano(0));
		line("");
		line("cores=" + Runtime.getRuntime().availableProcessors() + " jdk=" + System.getProperty("java.version")
				+ " maxHeap=" + (Runtime.getRuntime().maxMemory() >> 20) + "MB seconds/phase=" + this.seconds
				+ " rounds=" + this.rounds + " pairs=" + this.pairs + " warmup=" + this.warmup + "s");
		line("");
		line("CPU: " + this.cpu.describe());
		line("");
		List<String> modes = list(System.getProperty("bench.modes", "lease"));
		for (String store : stores) {
			for (String mode : modes) {
				runStore(store, mode);
			}
		}
		String out = System.getProperty("bench.out");
		if (out != null) {
			Files.createDirectories(Path.of(out).toAbsolutePath().getParent());
			Files.writeString(Path.of(out), this.report);
			System.out.println("written to " + out);
		}
	}

	/** The non-empty items of a comma-separated property. */
	private static List<String> list(String commaSeparated) {
		return Arrays.stream(commaSeparated.split(",")).map(String::strip).filter((item) -> !item.isEmpty()).toList();
	}

	/**
	 * A property set on the command line, or null when absent or empty (the bench profile
	 * passes every knob, empty when not set).
	 */
	private static @Nullable String knob(String name) {
		String value = System.getProperty(name);
		return (value == null || value.isBlank()) ? null : value.strip();
	}

	private void runStore(String store, String mode) throws Exception {
		String label = store + " / " + mode;
		String name = "idem_bench_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
		Path warehouse = Files.createTempDirectory("bench-warehouse-");
		Map<String, Object> properties = new LinkedHashMap<>();
		properties.put("server.port", "0");
		properties.put("server.address", "127.0.0.1");
		properties.put("spring.main.banner-mode", "off");
		properties.put("logging.level.root", "WARN");
		properties.put("spring.datasource.url",
				"jdbc:h2:mem:catalog-" + name + ";DATABASE_TO_LOWER=TRUE;DB_CLOSE_DELAY=-1");
		properties.put("catalog.warehouse", warehouse.toString());
		properties.put("idempotency.store.memory.max-entries", "10000000");
		// One principal drives the load: its share must be the whole store, as before
		// the share existed.
		properties.put("idempotency.store.memory.max-share-per-scope", "1");
		// bench.modes: lease (the default) or record-after-success; each store runs
		// once per mode.
		properties.put("idempotency.mode", mode);
		// A schema or database of the run's own on PostgreSQL, dropped after the run, and
		// the warehouse: both go also when the application does not start.
		JdbcTestDatabase database = null;
		HikariDataSource controlPool = null;
		ConfigurableApplicationContext context = null;
		try {
			database = storeProperties(store, name, properties);
			line("## Store: " + label + " (load at start: " + load() + ")");
			line("");
			// As command-line arguments: they win over the application's own
			// application.yaml.
			String[] args = properties.entrySet()
				.stream()
				.map((e) -> "--" + e.getKey() + "=" + e.getValue())
				.toArray(String[]::new);
			SpringApplicationBuilder application = new SpringApplicationBuilder(SampleCatalogApplication.class);
			String waitMicros = knob("bench.wait.micros");
			long waitNanos = "memory-wait".equals(store)
					? Long.parseLong((waitMicros != null) ? waitMicros : "300") * 1000 : 0;
			String burnRows = knob("bench.burn.rows");
			String controlSql = switch (store) {
				case "memory-pgping" -> "SELECT 1";
				case "memory-pgburn" -> "SELECT count(*) FROM generate_series(1, "
						+ Integer.parseInt((burnRows != null) ? burnRows : "3000") + ")";
				default -> null;
			};
			if (controlSql != null) {
				controlPool = new HikariDataSource();
				controlPool.setJdbcUrl(PG_ADMIN_URL);
				controlPool.setUsername("postgres");
				controlPool.setMaximumPoolSize(10);
				controlPool.setPoolName("bench-control");
			}
			StoreCallMeter.Call extra = controlRoundTrip(controlPool, controlSql);
			application.initializers((ctx) -> ctx.getBeanFactory().addBeanPostProcessor(new BeanPostProcessor() {
				@Override
				public Object postProcessAfterInitialization(Object bean, String beanName) {
					return (bean instanceof IdempotencyStore) ? this.measured(bean) : bean;
				}

				private Object measured(Object bean) {
					// A subclass proxy, so beans that need the store's own class
					// still get one.
					ProxyFactory proxy = new ProxyFactory(bean);
					proxy.setProxyTargetClass(true);
					proxy.addAdvice((MethodInterceptor) (invocation) -> CatalogLoadBenchmark.this.storeCalls
						.measure(invocation::proceed, waitNanos, extra));
					return proxy.getProxy();
				}
			}));
			context = application.run(args);
			String catalogUrl = context.getEnvironment().getProperty("spring.datasource.url");
			boolean catalogOnPostgresql = store.equals("postgresql-atomic") || store.equals("postgresql-shared");
			if (!catalogUrl.startsWith(catalogOnPostgresql ? "jdbc:postgresql:" : "jdbc:h2:mem:")) {
				throw new IllegalStateException("the catalog runs on the wrong database: " + catalogUrl);
			}
			this.base = URI.create("http://127.0.0.1:" + context.getEnvironment().getProperty("local.server.port"));
			MeterRegistry meters = context.getBean(MeterRegistry.class);
			this.catalogDb = JdbcClient.create(context.getBean(DataSource.class));
			namespacesAndTables(label);
			oneKeyManyClients(meters);
			unprotectedReads(meters);
		}
		finally {
			try {
				if (context != null) {
					if ("redis".equals(store)) {
						deleteRedisKeys(context.getBean(RedisConnectionFactory.class), name + ":");
					}
					context.close();
				}
				if (controlPool != null) {
					controlPool.close();
				}
			}
			finally {
				drop(database);
				deleteRecursively(warehouse);
			}
		}
	}

	/**
	 * Puts the store's settings into {@code properties} and returns the schema or
	 * database it created on PostgreSQL for the run, {@code null} when none.
	 */
	private static @Nullable JdbcTestDatabase storeProperties(String store, String name, Map<String, Object> properties)
			throws SQLException {
		JdbcTestDatabase database = null;
		switch (store) {
			case "memory" -> properties.put("idempotency.store.type", "memory");
			// Controls for issue 13.4: the in-memory store, but every call also makes one
			// round trip to PostgreSQL on a pool of the benchmark's own, either a trivial
			// one (SELECT 1: the JDBC client and the hand-over, little server CPU) or one
			// that makes the server burn about as much CPU as a store statement
			// (bench.burn.rows of generate_series): what sharing the cores with a busy
			// server costs the application, without the JDBC store's code.
			case "memory-pgping", "memory-pgburn" -> properties.put("idempotency.store.type", "memory");
			// A control: the in-memory store, but every call waits as long as a store
			// round trip would, without using any CPU. What this costs more than "memory"
			// is the cost of waiting itself (more requests in the catalog at once), not
			// of a store client.
			case "memory-wait" -> properties.put("idempotency.store.type", "memory");
			case "h2" -> {
				properties.put("idempotency.store.type", "jdbc");
				properties.put("idempotency.store.jdbc.url", "jdbc:h2:mem:" + name + ";DB_CLOSE_DELAY=-1");
				properties.put("idempotency.store.jdbc.username", "sa");
			}
			case "postgresql", "postgresql-async-commit", "postgresql-async-reserve" -> {
				database = JdbcTestDatabase.postgres().create();
				if (store.equals("postgresql-async-reserve")) {
					// Only the reservation is written without waiting for its WAL
					// flush (lease mode; record-after-success makes no reservation).
					properties.put("idempotency.store.jdbc.postgresql.reserve-asynchronous-commit", "true");
				}
				if (store.equals("postgresql-async-commit")) {
					// The opt-in trade-off of docs/jdbc-store.md: no WAL flush wait per
					// statement, at the price of losing the last records on a crash of
					// the database server.
					properties.put("idempotency.store.jdbc.pool.connection-init-sql", "SET synchronous_commit TO off");
				}
				properties.put("idempotency.store.type", "jdbc");
				properties.put("idempotency.store.jdbc.url", database.url());
				properties.put("idempotency.store.jdbc.username", database.user());
				properties.put("idempotency.store.jdbc.initialize-schema", "always");
				String poolSize = knob("bench.pool-size");
				if (poolSize != null) {
					properties.put("idempotency.store.jdbc.pool.maximum-pool-size", poolSize);
				}
			}
			// The catalog and the records in one PostgreSQL database (a database, not a
			// schema: JdbcCatalog looks for its tables in every schema), the store on the
			// application's DataSource: atomic completion (the default there), or the
			// same set-up with it switched off, as its control.
			case "postgresql-atomic", "postgresql-shared" -> {
				database = JdbcTestDatabase.postgresDatabase().create();
				properties.put("spring.datasource.url", database.url());
				properties.put("spring.datasource.username", database.user());
				properties.put("idempotency.store.type", "jdbc");
				properties.put("idempotency.store.jdbc.initialize-schema", "always");
				properties.put("idempotency.store.jdbc.transactional-completion",
						Boolean.toString(store.equals("postgresql-atomic")));
				String poolSize = knob("bench.pool-size");
				if (poolSize != null) {
					properties.put("spring.datasource.hikari.maximum-pool-size", poolSize);
				}
			}
			case "redis" -> {
				properties.put("idempotency.store.type", "redis");
				properties.put("spring.data.redis.host", "127.0.0.1");
				properties.put("spring.data.redis.port", "6379");
				properties.put("idempotency.store.redis.key-prefix", name + ":");
			}
			default -> throw new IllegalArgumentException("unknown store " + store);
		}
		return database;
	}

	/**
	 * Drops the run's schema or database; a failure is printed, not thrown, so that it
	 * does not hide the run's own.
	 */
	private static void drop(@Nullable JdbcTestDatabase database) {
		if (database == null) {
			return;
		}
		try {
			database.drop();
		}
		catch (SQLException ex) {
			System.err.println("could not drop " + database.name() + ": " + ex);
		}
	}

	/** One statement on the control pool, or nothing. */
	private static StoreCallMeter.@Nullable Call controlRoundTrip(@Nullable DataSource pool, @Nullable String sql) {
		if (pool == null || sql == null) {
			return null;
		}
		return () -> {
			try (Connection connection = pool.getConnection();
					java.sql.PreparedStatement statement = connection.prepareStatement(sql);
					java.sql.ResultSet rs = statement.executeQuery()) {
				rs.next();
				return null;
			}
		};
	}

	private void namespacesAndTables(String store) throws Exception {
		IntFunction<HttpRequest> unprotected = (client) -> namespaceRequest(null);
		IntFunction<HttpRequest> protectedCall = (client) -> namespaceRequest(newKey());
		// Warm-up of both paths: JIT, pools, caches.
		drive(16, Integer.MAX_VALUE, this.warmup, unprotected);
		drive(16, Integer.MAX_VALUE, this.warmup, protectedCall);
		line("| createNamespace | clients | unprotected req/s | protected req/s | **ratio** | ratio per pair: median [min, max] | p50 ms unprot → prot | p99 ms unprot → prot | app CPU µs/req unprot → prot | in store calls: CPU µs/req (wall ms/req) | store server CPU µs/req unprot → prot | JVM CPU µs/req unprot → prot | errors | load |");
		line("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|");
		for (int c : this.clients) {
			// Iceberg's JdbcCatalog checks a new namespace with a LIKE over all
			// namespaces: its cost grows with their number. So every phase sends the same
			// number of requests from an emptied catalog, and the sides alternate in
			// pairs AB BA AB ... A pair's ratio compares two phases a few seconds apart;
			// the spread over the pairs is the noise.
			clearNamespaces();
			int budget = budget(drive(c, Integer.MAX_VALUE, this.seconds, unprotected));
			Result off = new Result();
			Result on = new Result();
			List<Double> pairRatios = new ArrayList<>();
			for (int pair = 0; pair < this.pairs; pair++) {
				Result pairOff = null;
				Result pairOn = null;
				for (int side = 0; side < 2; side++) {
					boolean protectedSide = (side == 0) != (pair % 2 == 0);
					clearNamespaces();
					System.gc();
					Result phase = measuredDrive(c, budget, protectedSide ? protectedCall : unprotected);
					if (protectedSide) {
						pairOn = phase;
					}
					else {
						pairOff = phase;
					}
				}
				pairRatios.add(pairOn.throughput() / pairOff.throughput());
				off.add(pairOff);
				on.add(pairOn);
			}
			List<Double> sortedRatios = pairRatios.stream().sorted().toList();
			double median = (sortedRatios.get((sortedRatios.size() - 1) / 2)
					+ sortedRatios.get(sortedRatios.size() / 2)) / 2;
			line(String.format(Locale.ROOT,
					"| %s | %d | %.0f | %.0f | **%.2f** | %.2f [%.2f, %.2f] | %.2f → %.2f | %.1f → %.1f | %.0f → %.0f | %.0f (%.2f) | %.0f → %.0f | %.0f → %.0f | %d/%d | %s |",
					store, c, off.throughput(), on.throughput(), on.throughput() / off.throughput(), median,
					sortedRatios.get(0), sortedRatios.get(sortedRatios.size() - 1), off.percentile(50),
					on.percentile(50), off.percentile(99), on.percentile(99),
					off.micros(CpuAccounting.Usage::appThreadNanos), on.micros(CpuAccounting.Usage::appThreadNanos),
					on.store[0] / 1e3 / on.requests(), on.store[1] / 1e6 / on.requests(),
					off.micros(CpuAccounting.Usage::serverNanos), on.micros(CpuAccounting.Usage::serverNanos),
					off.micros(CpuAccounting.Usage::jvmNanos), on.micros(CpuAccounting.Usage::jvmNanos), off.errors,
					on.errors, load()));
		}
		line("");

		// createTable: first execution (new key, new table) against a replay of a
		// completed key.
		String namespace = "tables_" + this.names.incrementAndGet();
		send(namespaceRequest(null, namespace));
		IntFunction<HttpRequest> first = (client) -> tableRequest(namespace, "t" + this.names.incrementAndGet(),
				newKey());
		drive(16, Integer.MAX_VALUE, this.warmup, first);
		line("| createTable | clients | first execution req/s | replay req/s | replay/first | first p50 ms | replay p50 ms | first p99 ms | replay p99 ms | errors | load |");
		line("|---|---|---|---|---|---|---|---|---|---|---|");
		for (int c : this.clients) {
			List<HttpRequest> completed = new ArrayList<>();
			for (int i = 0; i < c; i++) {
				HttpRequest request = tableRequest(namespace, "r" + this.names.incrementAndGet(), newKey());
				HttpResponse<byte[]> response = send(request);
				if (response.statusCode() != 200) {
					throw new IllegalStateException("createTable answered " + response.statusCode() + ": "
							+ new String(response.body(), StandardCharsets.UTF_8));
				}
				saveSample(response.body());
				completed.add(request);
			}
			Result firstRun = new Result();
			Result replay = new Result();
			for (int round = 0; round < this.rounds; round++) {
				firstRun.add(drive(c, Integer.MAX_VALUE, this.seconds, first));
				replay.add(drive(c, Integer.MAX_VALUE, this.seconds, (client) -> completed.get(client)));
			}
			line(String.format(Locale.ROOT,
					"| %s | %d | %.0f | %.0f | **%.2f** | %.2f | %.2f | %.2f | %.2f | %d/%d | %s |", store, c,
					firstRun.throughput(), replay.throughput(), replay.throughput() / firstRun.throughput(),
					firstRun.percentile(50), replay.percentile(50), firstRun.percentile(99), replay.percentile(99),
					firstRun.errors, replay.errors, load()));
		}
		line("");
	}

	/**
	 * 64 clients send the same request with the same key at once: it must run exactly
	 * once.
	 */
	private void oneKeyManyClients(MeterRegistry meters) throws Exception {
		line("| 64 clients, one key | trial | executions (metric) | answered 200 first | replayed | other | all answered after ms |");
		line("|---|---|---|---|---|---|---|");
		for (int trial = 1; trial <= 3; trial++) {
			double executedBefore = count(meters, "executed") + count(meters, "taken_over");
			HttpRequest request = namespaceRequest(newKey());
			int n = 64;
			CyclicBarrier start = new CyclicBarrier(n + 1);
			CountDownLatch done = new CountDownLatch(n);
			AtomicLong fresh = new AtomicLong();
			AtomicLong replayed = new AtomicLong();
			AtomicLong other = new AtomicLong();
			for (int i = 0; i < n; i++) {
				startThread(() -> {
					try {
						start.await();
						HttpResponse<byte[]> response = send(request);
						if (response.statusCode() == 200) {
							(response.headers().firstValue("Idempotent-Replayed").isPresent() ? replayed : fresh)
								.incrementAndGet();
						}
						else {
							other.incrementAndGet();
						}
					}
					catch (Exception ex) {
						other.incrementAndGet();
					}
					finally {
						done.countDown();
					}
				});
			}
			start.await();
			long t0 = System.nanoTime();
			done.await();
			double ms = (System.nanoTime() - t0) / 1e6;
			double executions = count(meters, "executed") + count(meters, "taken_over") - executedBefore;
			line(String.format(Locale.ROOT, "| | %d | **%.0f** | %d | %d | %d | %.1f |", trial, executions, fresh.get(),
					replayed.get(), other.get(), ms));
		}
		line("");
	}

	/**
	 * Reads and key-less writes never reach the store: the store-call timer does not
	 * move.
	 */
	private void unprotectedReads(MeterRegistry meters) throws Exception {
		String namespace = "reads_" + this.names.incrementAndGet();
		send(namespaceRequest(null, namespace));
		long before = storeCalls(meters);
		int requests = 0;
		for (int i = 0; i < 500; i++) {
			send(HttpRequest.newBuilder(this.base.resolve("/v1/namespaces/" + namespace)).GET().build());
			send(HttpRequest.newBuilder(this.base.resolve("/v1/namespaces")).GET().build());
			send(HttpRequest.newBuilder(this.base.resolve("/v1/config")).GET().build());
			send(HttpRequest.newBuilder(this.base.resolve("/v1/namespaces/" + namespace))
				.method("HEAD", HttpRequest.BodyPublishers.noBody())
				.build());
			requests += 4;
		}
		long afterReads = storeCalls(meters);
		send(namespaceRequest(newKey()));
		long afterOneProtected = storeCalls(meters);
		line("Unprotected GET/HEAD requests: " + requests + ", store calls during them: **" + (afterReads - before)
				+ "**; one protected createNamespace afterwards: " + (afterOneProtected - afterReads)
				+ " store calls (reserve + complete).");
		line("");
	}

	private static long storeCalls(MeterRegistry meters) {
		return meters.find("idempotency.store.calls").timers().stream().mapToLong(Timer::count).sum();
	}

	private static double count(MeterRegistry meters, String outcome) {
		return meters.find("idempotency.requests")
			.tag("outcome", outcome)
			.counters()
			.stream()
			.mapToDouble(io.micrometer.core.instrument.Counter::count)
			.sum();
	}

	private HttpRequest namespaceRequest(String key) {
		return namespaceRequest(key, "ns_" + this.names.incrementAndGet());
	}

	private HttpRequest namespaceRequest(String key, String namespace) {
		String body = "{\"namespace\":[\"" + namespace
				+ "\"],\"properties\":{\"owner\":\"bench\",\"team\":\"orders\"}}";
		HttpRequest.Builder builder = HttpRequest.newBuilder(this.base.resolve("/v1/namespaces"))
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString(body));
		if (key != null) {
			builder.header("Idempotency-Key", key);
		}
		return builder.build();
	}

	private HttpRequest tableRequest(String namespace, String table, String key) {
		return HttpRequest.newBuilder(this.base.resolve("/v1/namespaces/" + namespace + "/tables"))
			.header("Content-Type", "application/json")
			.header("Idempotency-Key", key)
			.POST(HttpRequest.BodyPublishers.ofString(TABLE_REQUEST.replace("%TABLE%", table)))
			.build();
	}

	private HttpResponse<byte[]> send(HttpRequest request) throws IOException, InterruptedException {
		return this.http.send(request, HttpResponse.BodyHandlers.ofByteArray());
	}

	private void clearNamespaces() {
		this.catalogDb.sql("DELETE FROM iceberg_namespace_properties").update();
	}

	/**
	 * As many requests as the calibration run did: one phase of about
	 * {@code bench.seconds}.
	 */
	private static int budget(Result calibration) {
		return (int) Math.max(50, calibration.requests());
	}

	/** {@link #drive} with the CPU each party used during it. */
	private Result measuredDrive(int clients, int maxRequests, IntFunction<HttpRequest> requests) throws Exception {
		CpuAccounting.Usage before = this.cpu.now();
		long[] storeBefore = this.storeCalls.snapshot();
		Map<String, long[]> groupsBefore = DETAIL ? this.cpu.appThreadGroups() : Map.of();
		long[] switchesBefore = DETAIL ? CpuAccounting.contextSwitches() : new long[2];
		long startedMillis = System.currentTimeMillis();
		Result result = drive(clients, maxRequests, 3 * this.seconds, requests);
		result.usage = this.cpu.now().minus(before);
		long[] storeAfter = this.storeCalls.snapshot();
		for (int i = 0; i < 3; i++) {
			result.store[i] = storeAfter[i] - storeBefore[i];
		}
		if (DETAIL) {
			long[] switches = CpuAccounting.contextSwitches();
			StringBuilder detail = new StringBuilder(String.format(Locale.ROOT,
					"phase %s..%s (epoch ms) of %d requests, context switches/request of the JVM's threads:"
							+ " voluntary %.1f, involuntary %.1f; in store calls %.0f µs/request;"
							+ " µs/request cpu (user):",
					startedMillis, System.currentTimeMillis(), result.requests(),
					(switches[0] - switchesBefore[0]) / (double) result.requests(),
					(switches[1] - switchesBefore[1]) / (double) result.requests(),
					result.store[0] / 1e3 / result.requests()));
			this.cpu.appThreadGroups().forEach((group, sums) -> {
				long[] earlier = groupsBefore.getOrDefault(group, new long[2]);
				double cpuMicros = (sums[0] - earlier[0]) / 1e3 / result.requests();
				if (cpuMicros >= 1) {
					detail.append(String.format(Locale.ROOT, " %s=%.0f (%.0f)", group, cpuMicros,
							(sums[1] - earlier[1]) / 1e3 / result.requests()));
				}
			});
			System.out.println(detail);
		}
		return result;
	}

	/**
	 * Runs {@code clients} threads, each sending one request after the other, until
	 * {@code maxRequests} were sent in all or {@code seconds} passed.
	 */
	private Result drive(int clients, int maxRequests, int seconds, IntFunction<HttpRequest> requests)
			throws Exception {
		AtomicLong budget = new AtomicLong(maxRequests);
		Result result = new Result();
		long[][] latencies = new long[clients][];
		int[] counts = new int[clients];
		long[] errors = new long[clients];
		CyclicBarrier start = new CyclicBarrier(clients + 1);
		long duration = Duration.ofSeconds(seconds).toNanos();
		List<Thread> threads = new ArrayList<>();
		for (int i = 0; i < clients; i++) {
			int client = i;
			threads.add(startThread(() -> {
				long[] own = new long[1 << 14];
				int n = 0;
				try {
					start.await();
					long end = System.nanoTime() + duration;
					while (true) {
						HttpRequest request = requests.apply(client);
						long t0 = System.nanoTime();
						if (t0 >= end || budget.getAndDecrement() <= 0) {
							break;
						}
						HttpResponse<byte[]> response = send(request);
						long t1 = System.nanoTime();
						if (response.statusCode() >= 300) {
							errors[client]++;
						}
						if (n == own.length) {
							own = Arrays.copyOf(own, n * 2);
						}
						own[n++] = t1 - t0;
					}
				}
				catch (Exception ex) {
					throw new IllegalStateException(ex);
				}
				latencies[client] = own;
				counts[client] = n;
			}));
		}
		this.cpu.pinDriverThreads();
		start.await();
		long began = System.nanoTime();
		for (Thread thread : threads) {
			thread.join();
		}
		result.seconds = (System.nanoTime() - began) / 1e9;
		for (int i = 0; i < clients; i++) {
			result.addLatencies(Arrays.copyOf(latencies[i], counts[i]));
			result.errors += errors[i];
		}
		return result;
	}

	private static final class Result {

		private final List<long[]> parts = new ArrayList<>();

		private double seconds;

		private long errors;

		private long[] sorted;

		private CpuAccounting.Usage usage = new CpuAccounting.Usage(0, 0, 0);

		/** Store calls on request threads: CPU nanoseconds, wall nanoseconds, calls. */
		private final long[] store = new long[3];

		void addLatencies(long[] latencies) {
			this.parts.add(latencies);
		}

		void add(Result other) {
			this.parts.addAll(other.parts);
			this.seconds += other.seconds;
			this.errors += other.errors;
			this.usage = this.usage.plus(other.usage);
			for (int i = 0; i < 3; i++) {
				this.store[i] += other.store[i];
			}
		}

		/** Microseconds of one kind of CPU per request. */
		double micros(java.util.function.ToLongFunction<CpuAccounting.Usage> kind) {
			return kind.applyAsLong(this.usage) / 1e3 / requests();
		}

		long requests() {
			return this.parts.stream().mapToLong((part) -> part.length).sum();
		}

		double throughput() {
			return requests() / this.seconds;
		}

		double percentile(int p) {
			if (this.sorted == null) {
				this.sorted = this.parts.stream().flatMapToLong(Arrays::stream).sorted().toArray();
			}
			if (this.sorted.length == 0) {
				return Double.NaN;
			}
			int index = (int) Math.ceil(p / 100.0 * this.sorted.length) - 1;
			return this.sorted[Math.max(0, index)] / 1e6;
		}

	}

	private void line(String text) {
		System.out.println(text);
		this.report.append(text).append('\n');
	}

	private static final AtomicLong THREADS = new AtomicLong();

	private static Thread startThread(Runnable work) {
		Thread thread = new Thread(work, CpuAccounting.CLIENT_THREAD_PREFIX + THREADS.incrementAndGet());
		thread.start();
		return thread;
	}

	private static String load() {
		return String.format(Locale.ROOT, "%.2f", ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
	}

	private static void saveSample(byte[] body) {
		try {
			Path out = Path.of("target", "bench", "create-table-response.json");
			Files.createDirectories(out.getParent());
			Files.write(out, body);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/** A UUIDv7 for now (RFC 9562). */
	static String newKey() {
		// Not a secure random: the driver's keys need only be unique, and SecureRandom's
		// lock would slow the protected side's clients, not the server.
		ThreadLocalRandom random = ThreadLocalRandom.current();
		long millis = System.currentTimeMillis();
		long high = (millis << 16) | 0x7000L | (random.nextInt() & 0x0FFFL);
		long low = (random.nextLong() & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L;
		return new UUID(high, low).toString();
	}

	private static void deleteRedisKeys(RedisConnectionFactory factory, String prefix) {
		try (var connection = factory.getConnection();
				Cursor<byte[]> keys = connection.keyCommands()
					.scan(ScanOptions.scanOptions().match(prefix + "*").count(1000).build())) {
			while (keys.hasNext()) {
				connection.keyCommands().del(keys.next());
			}
		}
	}

	private static String resource(String name) {
		try (InputStream in = CatalogLoadBenchmark.class.getResourceAsStream(name)) {
			return new String(in.readAllBytes(), StandardCharsets.UTF_8).strip();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static void deleteRecursively(Path root) throws IOException {
		try (Stream<Path> paths = Files.walk(root)) {
			paths.sorted(Comparator.reverseOrder()).forEach((path) -> path.toFile().delete());
		}
	}

}
