package dev.idempotency.store.jdbc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.autoconfigure.jdbc.JdbcStoreTestSupport;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.ReserveRequest;
import dev.idempotency.store.ReserveResult;
import dev.idempotency.store.StoredResponse;
import dev.idempotency.test.servers.JdbcTestDatabase;

/**
 * Measures the reservation on PostgreSQL with and without
 * {@code idempotency.store.jdbc.postgresql.reserve-asynchronous-commit}: fresh keys
 * (every reservation writes), from 1 and 8 threads, rounds alternating the two stores, on
 * the server at 127.0.0.1:5432 in a schema of its own. Not a test: run by hand
 * (docs/jdbc-store.md), prints a Markdown table. Arguments: calls per round (2000),
 * rounds (3), warm-up per store (500).
 */
public final class ReserveAsynchronousCommitMeasurement {

	private static final Duration LEASE = Duration.ofMinutes(5);

	private static final Duration RETENTION = Duration.ofMinutes(10);

	private ReserveAsynchronousCommitMeasurement() {
	}

	public static void main(String[] args) throws Exception {
		int reserves = (args.length > 0) ? Integer.parseInt(args[0]) : 2000;
		int rounds = (args.length > 1) ? Integer.parseInt(args[1]) : 3;
		int warmup = (args.length > 2) ? Integer.parseInt(args[2]) : 500;
		JdbcTestDatabase database = JdbcTestDatabase.postgres().create();
		try (HikariDataSource pool = database.dataSource(8)) {
			JdbcStoreTestSupport.createSchema(pool, "idempotency_record");
			JdbcIdempotencyStore durable = JdbcIdempotencyStore.builder(pool)
				.dialect(JdbcIdempotencyDialect.POSTGRESQL)
				.tableName("idempotency_record")
				.transactionalCompletion(false)
				.queryTimeout(Duration.ZERO)
				.reserveCommit(JdbcIdempotencyStore.ReserveCommit.OFF)
				.build();
			JdbcIdempotencyStore asynchronous = JdbcIdempotencyStore.builder(pool)
				.dialect(JdbcIdempotencyDialect.POSTGRESQL)
				.tableName("idempotency_record")
				.transactionalCompletion(false)
				.queryTimeout(Duration.ZERO)
				.reserveCommit(JdbcIdempotencyStore.ReserveCommit.ON)
				.build();
			run(durable, 1, warmup, false);
			run(asynchronous, 1, warmup, false);
			System.out.println("| operation | threads | option | round | calls/s | median µs | p90 µs |");
			System.out.println("|---|---|---|---|---|---|---|");
			for (boolean pairs : new boolean[] { false, true }) {
				for (int threads : new int[] { 1, 8 }) {
					for (int round = 1; round <= rounds; round++) {
						boolean asyncFirst = (round % 2 == 0);
						for (boolean async : new boolean[] { asyncFirst, !asyncFirst }) {
							Result result = run(async ? asynchronous : durable, threads, reserves, pairs);
							System.out.printf("| %s | %d | %s | %d | %.0f | %d | %d |%n",
									pairs ? "reserve + complete" : "reserve", threads, async ? "on" : "off", round,
									result.perSecond(), result.percentile(50), result.percentile(90));
						}
					}
				}
			}
		}
		finally {
			database.drop();
		}
	}

	/**
	 * {@code count} fresh-key reservations (and completions when {@code pairs}) over
	 * {@code threads}.
	 */
	private static Result run(JdbcIdempotencyStore store, int threads, int count, boolean pairs) throws Exception {
		long[] micros = new long[count];
		AtomicInteger next = new AtomicInteger();
		StoredResponse response = new StoredResponse(201, Map.of(), "{}".getBytes());
		ExecutorService executor = Executors.newFixedThreadPool(threads);
		try {
			List<Future<?>> workers = new ArrayList<>();
			long start = System.nanoTime();
			for (int t = 0; t < threads; t++) {
				workers.add(executor.submit(() -> {
					for (int i = next.getAndIncrement(); i < count; i = next.getAndIncrement()) {
						RecordId id = new RecordId("measure", UUID.randomUUID().toString());
						String owner = UUID.randomUUID().toString();
						long before = System.nanoTime();
						ReserveResult result = store
							.reserve(new ReserveRequest(id, "fp", "POST /measure", owner, LEASE, RETENTION));
						if (pairs) {
							store.complete(id, owner, response);
						}
						micros[i] = (System.nanoTime() - before) / 1000;
						if (!(result instanceof ReserveResult.Acquired)) {
							throw new IllegalStateException("Not acquired: " + result);
						}
					}
					return null;
				}));
			}
			for (Future<?> worker : workers) {
				worker.get();
			}
			long elapsed = System.nanoTime() - start;
			return new Result(count * 1e9 / elapsed, micros);
		}
		finally {
			executor.shutdown();
		}
	}

	private record Result(double perSecond, long[] micros) {

		long percentile(int percent) {
			long[] sorted = this.micros.clone();
			Arrays.sort(sorted);
			return sorted[Math.min(sorted.length - 1, sorted.length * percent / 100)];
		}

	}

}
