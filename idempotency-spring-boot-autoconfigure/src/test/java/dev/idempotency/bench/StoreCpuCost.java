package dev.idempotency.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.ReserveRequest;
import dev.idempotency.store.ReserveResult;
import dev.idempotency.store.StoredResponse;

/**
 * What one protected call costs in CPU, without HTTP and without the catalog:
 * {@code threads} threads run reserve + complete with fresh keys (a createTable-sized
 * response) for {@code seconds}, and the run reports, per call, the CPU of this JVM (user
 * and system, from {@code /proc/self/stat}, so GC, JIT and client I/O threads count) and
 * of the store server's processes ({@code postgres} or {@code redis-server}, from
 * {@code /proc}).
 * <p>
 * Run with {@code -Pbench} (see docs/benchmarks.md); system properties
 * {@code bench.cost.stores} (postgresql,redis), {@code bench.cost.threads} (1,16),
 * {@code bench.cost.seconds} (10), {@code bench.cost.warmup} seconds before (10: until
 * the JIT has compiled the store's path).
 */
public final class StoreCpuCost {

	private static final long TICK_NANOS = 10_000_000L;

	private StoreCpuCost() {
	}

	public static void main(String[] args) throws Exception {
		int seconds = Integer.getInteger("bench.cost.seconds", 10);
		int warmup = Integer.getInteger("bench.cost.warmup", 10);
		StoredResponse response = EngineBenchmark.Payloads.RESPONSE; // the sample's
																		// createTable
																		// response
		System.out
			.println("| Store | threads | calls/s | client JVM CPU µs/call (user + sys) | store server CPU µs/call |");
		System.out.println("|---|---|---|---|---|");
		for (String name : System.getProperty("bench.cost.stores", "postgresql,redis").split(",")) {
			for (String threadCount : System.getProperty("bench.cost.threads", "1,16").split(",")) {
				measure(name.strip(), Integer.parseInt(threadCount.strip()), seconds, warmup, response);
			}
		}
		System.exit(0);
	}

	private static void measure(String name, int threads, int seconds, int warmup, StoredResponse response)
			throws Exception {
		try (BenchStores stores = new BenchStores(name, threads, false)) {
			// Warm-up: JIT, pool, prepared statements.
			run(stores.store, threads, warmup, response);
			Map<String, Long> threadsBefore = threadTicks();
			long[] jvmBefore = jvmTicks();
			long serverBefore = serverTicks(name);
			long t0 = System.nanoTime();
			long calls = run(stores.store, threads, seconds, response);
			double wall = (System.nanoTime() - t0) / 1e9;
			long[] jvmAfter = jvmTicks();
			long server = serverTicks(name) - serverBefore;
			double user = (jvmAfter[0] - jvmBefore[0]) * TICK_NANOS / 1e3 / calls;
			double sys = (jvmAfter[1] - jvmBefore[1]) * TICK_NANOS / 1e3 / calls;
			System.out.printf(Locale.ROOT, "| %s | %d | %.0f | %.0f (%.0f + %.0f) | %.0f |%n", name, threads,
					calls / wall, user + sys, user, sys, server * TICK_NANOS / 1e3 / calls);
			if (Boolean.getBoolean("bench.cpu.detail")) {
				StringBuilder detail = new StringBuilder("  JVM threads, µs/call:");
				threadTicks().forEach((group, ticks) -> {
					double micros = (ticks - threadsBefore.getOrDefault(group, 0L)) * TICK_NANOS / 1e3 / calls;
					if (micros >= 1) {
						detail.append(String.format(Locale.ROOT, " %s=%.0f", group, micros));
					}
				});
				System.out.println(detail);
			}
		}
	}

	/**
	 * reserve + complete with fresh keys from {@code threads} threads; returns the number
	 * of calls (2 per key).
	 */
	private static long run(IdempotencyStore store, int threads, int seconds, StoredResponse response)
			throws Exception {
		AtomicLong calls = new AtomicLong();
		List<Throwable> failures = java.util.Collections.synchronizedList(new ArrayList<>());
		CyclicBarrier start = new CyclicBarrier(threads + 1);
		long end = System.nanoTime() + Duration.ofSeconds(seconds).toNanos();
		List<Thread> workers = new ArrayList<>();
		for (int t = 0; t < threads; t++) {
			Thread worker = new Thread(() -> {
				try {
					start.await();
					ThreadLocalRandom random = ThreadLocalRandom.current();
					while (System.nanoTime() < end) {
						RecordId id = new RecordId("bench", new UUID(random.nextLong(), random.nextLong()).toString());
						String owner = Long.toHexString(random.nextLong());
						ReserveResult result = store.reserve(new ReserveRequest(id, "f".repeat(64), "bench.op", owner,
								Duration.ofSeconds(30), Duration.ofHours(1)));
						if (!(result instanceof ReserveResult.Acquired) || !store.complete(id, owner, response)) {
							throw new IllegalStateException("a fresh key was not reserved and completed: " + result);
						}
						calls.addAndGet(2);
					}
				}
				catch (Exception | Error ex) {
					failures.add(ex);
				}
			});
			worker.start();
			workers.add(worker);
		}
		start.await();
		for (Thread worker : workers) {
			worker.join();
		}
		if (!failures.isEmpty()) {
			IllegalStateException failure = new IllegalStateException(
					failures.size() + " of " + threads + " threads failed; no figures for this run");
			failures.forEach(failure::addSuppressed);
			throw failure;
		}
		return calls.get();
	}

	/**
	 * utime + stime of this process's threads, in clock ticks, by native thread name
	 * without digits.
	 */
	private static Map<String, Long> threadTicks() throws IOException {
		Map<String, Long> groups = new java.util.TreeMap<>();
		try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
			for (Path task : tasks.toList()) {
				try {
					String name = Files.readString(task.resolve("comm")).strip().replaceAll("[0-9]+", "N");
					String[] fields = fields(Files.readString(task.resolve("stat")));
					groups.merge(name, Long.parseLong(fields[11]) + Long.parseLong(fields[12]), Long::sum);
				}
				catch (IOException ex) {
					// ended meanwhile
				}
			}
		}
		return groups;
	}

	/** utime and stime of this process, in clock ticks. */
	private static long[] jvmTicks() throws IOException {
		String[] fields = fields(Files.readString(Path.of("/proc/self/stat")));
		return new long[] { Long.parseLong(fields[11]), Long.parseLong(fields[12]) };
	}

	private static long serverTicks(String store) throws IOException {
		String command = store.equals("redis") ? "redis-server" : store.equals("postgresql") ? "postgres" : null;
		if (command == null) {
			return 0;
		}
		long ticks = 0;
		try (Stream<Path> processes = Files.list(Path.of("/proc"))) {
			for (Path process : processes.toList()) {
				try {
					if (process.getFileName().toString().chars().allMatch(Character::isDigit) && command
						.equals(Files.readString(process.resolve("comm"), StandardCharsets.UTF_8).strip())) {
						String[] fields = fields(Files.readString(process.resolve("stat")));
						ticks += Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
					}
				}
				catch (IOException ex) {
					// ended meanwhile
				}
			}
		}
		return ticks;
	}

	/**
	 * The fields after the command name, which is in parentheses: field 3 (state) is
	 * index 0.
	 */
	private static String[] fields(String stat) {
		return stat.substring(stat.lastIndexOf(')') + 2).split(" ");
	}

}
