package dev.idempotency.sample.catalog.bench;

import java.lang.management.ManagementFactory;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

import dev.idempotency.Idempotent;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Import;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * What the starter adds to a light endpoint: a POST that inserts one row of its own into
 * PostgreSQL (about 50 µs of application CPU), unprotected ({@code /plain}, no
 * annotation) against protected ({@code /keyed}, {@code @Idempotent}, a fresh key per
 * request), in phases that alternate AB BA, per store and mode. A heavy endpoint hides
 * the starter's own cost in its noise; this one does not.
 * <p>
 * Reports, per variant: requests per second, and the CPU per request of the application's
 * threads and of the store servers ({@code postgres}, {@code redis-server} processes),
 * with what the protected side adds; the median over the pairs beside the whole-run
 * figure. Knobs: {@code bench.light.variants} (comma-separated
 * {@code store/mode[/atomic]}, store one of memory, postgresql, redis),
 * {@code bench.clients} (16), {@code bench.seconds} per phase (4), {@code bench.pairs}
 * (4), {@code bench.warmup} seconds (4), {@code bench.light.atomic-property} (the
 * property that turns on atomic completion), and {@code bench.out}.
 */
public final class LightEndpointBenchmark {

	private static final String PG_URL = "jdbc:postgresql://127.0.0.1:5432/test";

	private static final String BODY = "{\"item\":\"book\",\"quantity\":1}";

	private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	private final CpuAccounting cpu = CpuAccounting.unpinned();

	private final int clients = Integer.getInteger("bench.clients", 16);

	private final int seconds = Integer.getInteger("bench.seconds", 4);

	private final int pairs = Integer.getInteger("bench.pairs", 4);

	private final int warmup = Integer.getInteger("bench.warmup", 4);

	private final StringBuilder report = new StringBuilder();

	public static void main(String[] args) throws Exception {
		LightEndpointBenchmark benchmark = new LightEndpointBenchmark();
		try {
			benchmark.run();
		}
		finally {
			benchmark.cpu.close();
		}
		System.exit(0);
	}

	private void run() throws Exception {
		List<String> variants = Arrays.stream(System.getProperty("bench.light.variants",
				"memory/lease,postgresql/lease,postgresql/record-after-success,redis/lease,redis/record-after-success")
			.split(",")).map(String::strip).filter((v) -> !v.isEmpty()).toList();
		line("# Light endpoint (one INSERT), " + LocalDateTime.now().withNano(0));
		line("");
		line("cores=" + Runtime.getRuntime().availableProcessors() + " jdk=" + System.getProperty("java.version")
				+ " clients=" + this.clients + " seconds/phase=" + this.seconds + " pairs=" + this.pairs + " warmup="
				+ this.warmup + "s");
		line("");
		line("| variant | unprot. req/s | prot. req/s | app CPU µs/req unprot → prot (**added**; pairs' median) "
				+ "| store server CPU µs/req unprot → prot (**added**; pairs' median) | errors | load |");
		line("|---|---|---|---|---|---|---|");
		for (String variant : variants) {
			runVariant(variant);
		}
		String out = System.getProperty("bench.out");
		if (out != null) {
			Files.createDirectories(Path.of(out).toAbsolutePath().getParent());
			Files.writeString(Path.of(out), this.report);
			System.out.println("written to " + out);
		}
	}

	private void runVariant(String variant) throws Exception {
		String[] parts = variant.split("/");
		String store = parts[0];
		String mode = (parts.length > 1) ? parts[1] : "lease";
		boolean atomic = parts.length > 2 && parts[2].equals("atomic");
		String name = "light_bench_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
		sql("CREATE SCHEMA " + name);
		sql("CREATE TABLE " + name + ".light_order (id bigserial PRIMARY KEY, body text NOT NULL,"
				+ " created_at timestamptz NOT NULL DEFAULT now())");
		Map<String, Object> properties = new LinkedHashMap<>();
		properties.put("spring.config.name", "light-bench"); // not the catalog's
																// application.yaml
		properties.put("server.port", "0");
		properties.put("server.address", "127.0.0.1");
		properties.put("spring.main.banner-mode", "off");
		properties.put("logging.level.root", "WARN");
		properties.put("spring.liquibase.enabled", "false");
		properties.put("spring.datasource.url", PG_URL + "?currentSchema=" + name);
		properties.put("spring.datasource.username", "postgres");
		properties.put("idempotency.mode", mode);
		properties.put("idempotency.store.memory.max-entries", "10000000");
		switch (store) {
			case "memory" -> properties.put("idempotency.store.type", "memory");
			case "postgresql" -> properties.put("idempotency.store.type", "jdbc"); // the
																					// application's
																					// DataSource
			case "redis" -> {
				properties.put("idempotency.store.type", "redis");
				properties.put("spring.data.redis.host", "127.0.0.1");
				properties.put("idempotency.store.redis.key-prefix", name + ":");
			}
			default -> throw new IllegalArgumentException("unknown store " + store);
		}
		String atomicProperty = System.getProperty("bench.light.atomic-property");
		if (atomicProperty != null && !atomicProperty.isBlank()) {
			// Named explicitly either way, so that "not atomic" is not left to a default.
			properties.put(atomicProperty, Boolean.toString(atomic));
		}
		else if (atomic) {
			throw new IllegalArgumentException(variant + " needs -Dbench.light.atomic-property");
		}
		ConfigurableApplicationContext context = new SpringApplicationBuilder(LightApp.class).properties(properties)
			.run();
		try {
			URI base = URI.create("http://127.0.0.1:" + context.getEnvironment().getProperty("local.server.port"));
			drive(base, false, this.warmup);
			drive(base, true, this.warmup);
			List<Phase> plain = new ArrayList<>();
			List<Phase> keyed = new ArrayList<>();
			for (int pair = 0; pair < this.pairs; pair++) {
				boolean keyedFirst = pair % 2 == 1;
				Phase first = drive(base, keyedFirst, this.seconds);
				Phase second = drive(base, !keyedFirst, this.seconds);
				plain.add(keyedFirst ? second : first);
				keyed.add(keyedFirst ? first : second);
			}
			Phase p = Phase.sum(plain);
			Phase k = Phase.sum(keyed);
			double[] appAdded = new double[this.pairs];
			double[] serverAdded = new double[this.pairs];
			for (int i = 0; i < this.pairs; i++) {
				appAdded[i] = keyed.get(i).appMicros() - plain.get(i).appMicros();
				serverAdded[i] = keyed.get(i).serverMicros() - plain.get(i).serverMicros();
			}
			line(String.format(Locale.ROOT,
					"| %s | %.0f | %.0f | %.0f → %.0f (**%+.0f**; %+.0f) | %.0f → %.0f (**%+.0f**; %+.0f) | %d | %s |",
					variant, p.rate(), k.rate(), p.appMicros(), k.appMicros(), k.appMicros() - p.appMicros(),
					median(appAdded), p.serverMicros(), k.serverMicros(), k.serverMicros() - p.serverMicros(),
					median(serverAdded), p.errors + k.errors, load()));
		}
		finally {
			context.close();
			sql("DROP SCHEMA " + name + " CASCADE");
		}
	}

	private Phase drive(URI base, boolean keyed, int phaseSeconds) throws Exception {
		CpuAccounting.Usage before = this.cpu.now();
		LongAdder requests = new LongAdder();
		LongAdder errors = new LongAdder();
		CyclicBarrier start = new CyclicBarrier(this.clients + 1);
		long end = System.nanoTime() + Duration.ofSeconds(phaseSeconds).toNanos();
		List<Thread> threads = new ArrayList<>();
		for (int i = 0; i < this.clients; i++) {
			Thread thread = new Thread(() -> {
				try {
					start.await();
					while (System.nanoTime() < end) {
						HttpRequest.Builder request = HttpRequest.newBuilder(base.resolve(keyed ? "/keyed" : "/plain"))
							.header("Content-Type", "application/json")
							.POST(HttpRequest.BodyPublishers.ofString(BODY));
						if (keyed) {
							request.header("Idempotency-Key", CatalogLoadBenchmark.newKey());
						}
						HttpResponse<Void> response = this.http.send(request.build(),
								HttpResponse.BodyHandlers.discarding());
						requests.increment();
						if (response.statusCode() != 201) {
							errors.increment();
						}
					}
				}
				catch (Exception ex) {
					throw new IllegalStateException(ex);
				}
			}, CpuAccounting.CLIENT_THREAD_PREFIX + THREADS.incrementAndGet());
			thread.start();
			threads.add(thread);
		}
		long began = System.nanoTime();
		start.await();
		for (Thread thread : threads) {
			thread.join();
		}
		Phase phase = new Phase(requests.sum(), errors.sum(), (System.nanoTime() - began) / 1e9,
				this.cpu.now().minus(before));
		return phase;
	}

	private static final AtomicLong THREADS = new AtomicLong();

	private static double median(double[] values) {
		double[] sorted = values.clone();
		Arrays.sort(sorted);
		int n = sorted.length;
		return (n % 2 == 1) ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
	}

	private static String load() {
		return String.format(Locale.ROOT, "%.1f", ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
	}

	private static void sql(String sql) throws SQLException {
		try (Connection connection = DriverManager.getConnection(PG_URL, "postgres", "")) {
			connection.createStatement().execute(sql);
		}
	}

	private void line(String text) {
		System.out.println(text);
		this.report.append(text).append('\n');
	}

	private record Phase(long requests, long errors, double seconds, CpuAccounting.Usage usage) {

		static Phase sum(List<Phase> phases) {
			long requests = 0;
			long errors = 0;
			double seconds = 0;
			CpuAccounting.Usage usage = new CpuAccounting.Usage(0, 0, 0);
			for (Phase phase : phases) {
				requests += phase.requests;
				errors += phase.errors;
				seconds += phase.seconds;
				usage = usage.plus(phase.usage);
			}
			return new Phase(requests, errors, seconds, usage);
		}

		double rate() {
			return this.requests / this.seconds;
		}

		double appMicros() {
			return this.usage.appThreadNanos() / 1e3 / this.requests;
		}

		double serverMicros() {
			return this.usage.serverNanos() / 1e3 / this.requests;
		}

	}

	/** The light application: two endpoints that insert one row each. */
	@SpringBootConfiguration
	@EnableAutoConfiguration
	@Import(OrderEndpoints.class)
	static class LightApp {

	}

	@RestController
	static class OrderEndpoints {

		private final JdbcClient jdbc;

		OrderEndpoints(JdbcClient jdbc) {
			this.jdbc = jdbc;
		}

		@PostMapping("/plain")
		ResponseEntity<String> plain(@RequestBody String body) {
			return ResponseEntity.status(201).body(insert(body));
		}

		@PostMapping("/keyed")
		@Idempotent
		ResponseEntity<String> keyed(@RequestBody String body) {
			return ResponseEntity.status(201).body(insert(body));
		}

		private String insert(String body) {
			long id = this.jdbc.sql("INSERT INTO light_order (body) VALUES (?) RETURNING id")
				.param(body)
				.query(Long.class)
				.single();
			return "{\"id\":" + id + "}";
		}

	}

}
