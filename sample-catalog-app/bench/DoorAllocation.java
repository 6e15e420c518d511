import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

import jdk.jfr.Configuration;
import jdk.jfr.Recording;

/**
 * What a keyed request costs the application beside an unkeyed one, measured inside one
 * JVM, A/B interleaved: the bytes allocated per request (deterministic, unlike time on a
 * shared machine) and the CPU time per request, of every thread but the load's own.
 * Starts {@code OrdersBenchApp} in this JVM (Spring MVC or WebFlux, the in-memory store,
 * or Redis on 127.0.0.1:6379 with {@code -Dstore=redis}, under the key prefix
 * {@code door-allocation:}, deleted at the end),
 * sends {@code POST /orders} over keep-alive connections from threads of its own, and
 * optionally, after them, records a JFR profile of keyed requests alone and one of unkeyed
 * requests alone ({@code PREFIX-keyed.jfr}, {@code PREFIX-unkeyed.jfr}).
 * <p>
 * From sample-catalog-app, after building target/cp.txt as docs/benchmarks.md says:
 * <pre>
 * java -Xms1g -Xmx1g -cp target/test-classes:target/classes:$(cat target/cp.txt) \
 *     bench/DoorAllocation.java webflux [rounds 10] [requests per round 20000] [jfr prefix]
 * </pre>
 * {@code -Dpath=/orders/db} measures an endpoint that inserts its order in PostgreSQL on
 * 127.0.0.1:5432: through JDBC on Spring MVC with {@code -Dstore=jdbc}, through R2DBC on
 * WebFlux with {@code -Dstore=r2dbc} (PostgreSQL's R2DBC driver on the class path: the
 * {@code bench-r2dbc} profile); the store's table and the orders are in a schema of the
 * run's own, dropped at the end.
 * {@code -Dsize=40|1k|8k} sends the sized orders of {@code bench/light-wrk.py}'s
 * {@code @40}, {@code @1k}, {@code @8k} variants (a 200-byte order answered in about 40
 * bytes, a 200-byte one answered in about 1 KB, a 2-KB one answered in about 8 KB) instead
 * of the 30-byte order answered in 40 bytes. {@code -Djfr.allocations=20000/s} takes that
 * many allocation samples a second in the JFR profiles (the profile's own: 300).
 */
public class DoorAllocation {

	private static final String BODY = body(System.getProperty("size", ""));

	private static final int CONNECTIONS = 4;

	private static final String REDIS_PREFIX = "door-allocation:";

	private static final SecureRandom RANDOM = new SecureRandom();

	private static final String PATH = System.getProperty("path", "/orders");

	private static final Set<Long> LOAD_THREADS = java.util.concurrent.ConcurrentHashMap.newKeySet();

	public static void main(String[] args) throws Exception {
		try {
			run(args);
		}
		catch (Throwable ex) {
			ex.printStackTrace();
			System.exit(1);
		}
		System.exit(0);
	}

	private static void run(String[] args) throws Exception {
		String stack = (args.length > 0) ? args[0] : "webflux";
		int rounds = (args.length > 1) ? Integer.parseInt(args[1]) : 10;
		int perRound = (args.length > 2) ? Integer.parseInt(args[2]) : 20000;
		String jfr = (args.length > 3) ? args[3] : null;
		String store = System.getProperty("store", "memory");
		LOAD_THREADS.add(Thread.currentThread().getId());
		int port;
		try (var probe = new java.net.ServerSocket(0)) {
			port = probe.getLocalPort();
		}
		String schema = "door_allocation_" + Long.toHexString(RANDOM.nextLong() & Long.MAX_VALUE);
		List<String> arguments = new ArrayList<>(List.of("--server.port=" + port, "--server.address=127.0.0.1",
				"--spring.main.banner-mode=off", "--logging.level.root=WARN", "--spring.liquibase.enabled=false",
				"--spring.datasource.url=jdbc:postgresql://127.0.0.1:5432/test?currentSchema=" + schema,
				"--spring.datasource.username=postgres", "--idempotency.mode=lease",
				"--idempotency.store.type=" + store, "--spring.data.redis.host=127.0.0.1",
				"--idempotency.store.redis.key-prefix=" + REDIS_PREFIX,
				// Tomcat closes a connection after 100 requests by default.
				"--server.tomcat.max-keep-alive-requests=-1",
				"--spring.main.web-application-type=" + (stack.equals("webflux") ? "reactive" : "servlet")));
		boolean database = store.equals("r2dbc") || store.equals("jdbc");
		if (database) {
			psql("CREATE SCHEMA " + schema + "; CREATE TABLE " + schema + ".light_order (id bigserial PRIMARY KEY,"
					+ " item text NOT NULL, quantity int NOT NULL, created_at timestamptz NOT NULL DEFAULT now())");
		}
		if (store.equals("r2dbc")) {
			arguments.addAll(List.of("--spring.r2dbc.url=r2dbc:postgresql://127.0.0.1:5432/test?schema=" + schema,
					"--spring.r2dbc.username=postgres", "--idempotency.store.r2dbc.initialize-schema=always"));
		}
		try {
			measureAll(stack, store, port, rounds, perRound, jfr, arguments);
		}
		finally {
			if (database) {
				psql("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
			}
		}
	}

	private static void psql(String sql) throws Exception {
		int exit = new ProcessBuilder("psql", "-q", "-h", "127.0.0.1", "-U", "postgres", "-d", "test", "-c", sql)
			.inheritIO()
			.start()
			.waitFor();
		if (exit != 0) {
			throw new IllegalStateException("psql failed: " + sql);
		}
	}

	private static void measureAll(String stack, String store, int port, int rounds, int perRound, String jfr,
			List<String> arguments) throws Exception {
		Class.forName("dev.idempotency.sample.catalog.bench.OrdersBenchApp")
			.getMethod("main", String[].class)
			.invoke(null, (Object) arguments.toArray(String[]::new));
		// Warm-up: both sides, the keyed one last and longer.
		load(port, false, 100_000);
		load(port, true, 200_000);
		List<long[]> plain = new ArrayList<>();
		List<long[]> keyed = new ArrayList<>();
		for (int round = 0; round < rounds; round++) {
			boolean[] order = (round % 2 == 0) ? new boolean[] { false, true } : new boolean[] { true, false };
			for (boolean k : order) {
				(k ? keyed : plain).add(measure(port, k, perRound));
			}
		}
		if (jfr != null) {
			// One profile of each side alone, so that allocation samples weigh one side's
			// bytes only (JFR_STACK: -XX:FlightRecorderOptions:stackdepth=256, Reactor's
			// stacks are deep).
			for (boolean k : new boolean[] { true, false }) {
				try (Recording recording = new Recording(Configuration.getConfiguration("profile"))) {
					recording.enable("jdk.ExecutionSample").withPeriod(java.time.Duration.ofMillis(10));
					// -Djfr.allocations=20000/s: many more allocation samples than the
					// profile's 300/s, for allocation sites of a few hundred bytes.
					String throttle = System.getProperty("jfr.allocations");
					if (throttle != null) {
						recording.enable("jdk.ObjectAllocationSample").with("throttle", throttle);
					}
					recording.start();
					Object profiler = asyncProfiler("start,event=cpu,interval=200us");
					load(port, k, rounds * perRound);
					if (profiler != null) {
						asyncProfiler("stop,collapsed,file=" + jfr + (k ? "-keyed" : "-unkeyed") + ".collapsed");
					}
					recording.stop();
					recording.dump(Path.of(jfr + (k ? "-keyed.jfr" : "-unkeyed.jfr")));
				}
			}
		}
		if (store.equals("redis")) {
			new ProcessBuilder("sh", "-c", "redis-cli -h 127.0.0.1 --scan --pattern '" + REDIS_PREFIX
					+ "*' | xargs -r -n 1000 redis-cli -h 127.0.0.1 del > /dev/null")
				.inheritIO()
				.start()
				.waitFor();
		}
		System.out.printf("%s %s, %s store, lease, request %d bytes: %d rounds of %d requests each side,"
				+ " %d connections%n", stack, PATH, store, BODY.length(), rounds, perRound, CONNECTIONS);
		double[] bytes = new double[rounds];
		double[] cpu = new double[rounds];
		for (int i = 0; i < rounds; i++) {
			bytes[i] = (keyed.get(i)[0] - plain.get(i)[0]) / (double) perRound;
			cpu[i] = (keyed.get(i)[1] - plain.get(i)[1]) / (double) perRound / 1000.0;
			System.out.printf("round %2d: bytes/req unkeyed %7.0f keyed %7.0f (+%6.0f); CPU µs/req unkeyed %6.1f"
					+ " keyed %6.1f (%+6.1f)%n", i, plain.get(i)[0] / (double) perRound,
					keyed.get(i)[0] / (double) perRound, bytes[i], plain.get(i)[1] / (double) perRound / 1000.0,
					keyed.get(i)[1] / (double) perRound / 1000.0, cpu[i]);
		}
		Arrays.sort(bytes);
		Arrays.sort(cpu);
		System.out.printf("median added: %.0f bytes/req, %.1f µs CPU/req (threads of the application only)%n",
				bytes[rounds / 2], cpu[rounds / 2]);
	}

	/**
	 * With {@code -Dasync.profiler=/path/to/libasyncProfiler.so}, runs an async-profiler
	 * command (its CPU samples have no safepoint bias and see the event loops' native
	 * frames); {@code null} without.
	 */
	private static Object asyncProfiler(String command) throws Exception {
		String library = System.getProperty("async.profiler");
		if (library == null) {
			return null;
		}
		Class<?> type = Class.forName("one.profiler.AsyncProfiler");
		Object profiler = type.getMethod("getInstance", String.class).invoke(null, library);
		return type.getMethod("execute", String.class).invoke(profiler, command);
	}

	/** Sends the requests; gives the bytes allocated and the CPU ns of the application's threads. */
	private static long[] measure(int port, boolean keyed, int requests) throws Exception {
		var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
		long[] ids = threads.getAllThreadIds();
		long[] allocatedBefore = threads.getThreadAllocatedBytes(ids);
		long[] cpuBefore = threads.getThreadCpuTime(ids);
		load(port, keyed, requests);
		long[] allocatedAfter = threads.getThreadAllocatedBytes(ids);
		long[] cpuAfter = threads.getThreadCpuTime(ids);
		long allocated = 0;
		long cpu = 0;
		for (int i = 0; i < ids.length; i++) {
			if (LOAD_THREADS.contains(ids[i]) || allocatedAfter[i] < 0 || allocatedBefore[i] < 0) {
				continue;
			}
			allocated += allocatedAfter[i] - allocatedBefore[i];
			if (cpuAfter[i] >= 0 && cpuBefore[i] >= 0) {
				cpu += cpuAfter[i] - cpuBefore[i];
			}
		}
		return new long[] { allocated, cpu };
	}

	private static void load(int port, boolean keyed, int requests) throws Exception {
		AtomicLong left = new AtomicLong(requests);
		CountDownLatch done = new CountDownLatch(CONNECTIONS);
		List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
		for (int c = 0; c < CONNECTIONS; c++) {
			Thread thread = new Thread(() -> {
				LOAD_THREADS.add(Thread.currentThread().getId());
				try (Socket socket = new Socket("127.0.0.1", port)) {
					socket.setTcpNoDelay(true);
					OutputStream out = socket.getOutputStream();
					InputStream in = new java.io.BufferedInputStream(socket.getInputStream(), 8192);
					while (left.getAndDecrement() > 0) {
						String head = "POST " + PATH + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
								+ (keyed ? "Idempotency-Key: " + uuidv7() + "\r\n" : "") + "Content-Length: "
								+ BODY.length() + "\r\n\r\n" + BODY;
						out.write(head.getBytes(StandardCharsets.ISO_8859_1));
						out.flush();
						int status = readResponse(in);
						if (status != 201) {
							throw new IllegalStateException("status " + status);
						}
					}
				}
				catch (Throwable ex) {
					failures.add(ex);
				}
				finally {
					done.countDown();
				}
			});
			thread.start();
		}
		done.await();
		if (!failures.isEmpty()) {
			throw new IllegalStateException("load failed", failures.get(0));
		}
	}

	private static int readResponse(InputStream in) throws IOException {
		ByteArrayOutputStream head = new ByteArrayOutputStream(256);
		int matched = 0;
		while (matched < 4) {
			int b = in.read();
			if (b < 0) {
				throw new IOException("closed");
			}
			head.write(b);
			matched = (b == "\r\n\r\n".charAt(matched)) ? matched + 1 : ((b == '\r') ? 1 : 0);
		}
		String text = head.toString(StandardCharsets.ISO_8859_1);
		int status = Integer.parseInt(text.substring(9, 12));
		int length = 0;
		boolean chunked = false;
		for (String line : text.split("\r\n")) {
			if (line.regionMatches(true, 0, "content-length:", 0, 15)) {
				length = Integer.parseInt(line.substring(15).trim());
			}
			chunked |= line.regionMatches(true, 0, "transfer-encoding: chunked", 0, 26);
		}
		if (!chunked) {
			in.skipNBytes(length);
			return status;
		}
		// Tomcat's answer: chunks (hex size, CRLF, data, CRLF), the last of size 0.
		while (true) {
			int size = Integer.parseInt(line(in), 16);
			if (size == 0) {
				line(in);
				return status;
			}
			in.skipNBytes(size);
			line(in);
		}
	}

	private static String line(InputStream in) throws IOException {
		StringBuilder line = new StringBuilder();
		int b;
		while ((b = in.read()) != '\n') {
			if (b < 0) {
				throw new IOException("closed");
			}
			if (b != '\r') {
				line.append((char) b);
			}
		}
		return line.toString();
	}

	/** As {@code bench/light-wrk.py}'s sized_body. */
	private static String body(String size) {
		int[] sizes = switch (size) {
			case "" -> null;
			case "40" -> new int[] { 200, 0 };
			case "1k" -> new int[] { 200, 1000 };
			case "8k" -> new int[] { 2000, 8000 };
			default -> throw new IllegalArgumentException("size " + size + ": 40, 1k or 8k");
		};
		if (sizes == null) {
			return "{\"item\":\"book\",\"quantity\":1}";
		}
		String body = "{\"item\":\"book\",\"quantity\":1,\"answerBytes\":" + sizes[1] + ",\"note\":\"";
		String words = "please leave the parcel at the door next to the blue bicycle thank you ";
		String note = words.repeat(sizes[0] / words.length() + 1)
			.substring(0, Math.max(0, sizes[0] - body.length() - 2));
		return body + note + "\"}";
	}

	private static String uuidv7() {
		long ms = System.currentTimeMillis();
		long high = (ms << 16) | 0x7000L | (RANDOM.nextInt() & 0x0fffL);
		long low = (RANDOM.nextLong() & 0x3fffffffffffffffL) | 0x8000000000000000L;
		return new java.util.UUID(high, low).toString();
	}

}
