package dev.idempotency.bench;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

import dev.idempotency.core.IdempotencyListener;
import dev.idempotency.core.IdempotencySettings;
import dev.idempotency.core.internal.Decision;
import dev.idempotency.core.internal.IdempotencyEngine;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.ReserveRequest;
import dev.idempotency.store.StoredResponseCodec;
import dev.idempotency.store.memory.InMemoryIdempotencyStore;
import dev.idempotency.store.redis.RedisIdempotencyStore;
import dev.idempotency.test.TestKeys;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.ScanOptions;
import org.springframework.jdbc.core.simple.JdbcClient;

/**
 * What one record costs in each store (a createTable response of the sample catalog), and
 * how many round trips one protected call makes: statements and commits at the JDBC
 * driver, commands on the Redis connection. Prints Markdown. Run by {@code -Pbench} after
 * the JMH benchmarks.
 */
public final class StoreFootprint {

	private static final int ROUND_TRIP_CALLS = 1000;

	public static void main(String[] args) throws Exception {
		int records = Integer.getInteger("bench.records", 10_000);
		System.out.println("## Store footprint and round trips (createTable response: "
				+ EngineBenchmark.Payloads.RESPONSE.body().length + " bytes JSON, "
				+ StoredResponseCodec.encode(EngineBenchmark.Payloads.RESPONSE).length + " bytes encoded)");
		System.out.println();
		System.out.println("| store | records | bytes per record | how measured |");
		System.out.println("|---|---|---|---|");
		memory(100_000);
		try (BenchStores pg = new BenchStores("postgresql", 4)) {
			fill(pg.store, records);
			JdbcClient jdbc = JdbcClient.create(pg.dataSource());
			jdbc.sql("VACUUM ANALYZE idempotency_record").update();
			Map<String, Object> row = jdbc.sql("SELECT count(*) AS n, avg(pg_column_size(t.*)) AS row_bytes,"
					+ " avg(octet_length(response)) AS response_bytes,"
					+ " pg_total_relation_size('idempotency_record') AS total, pg_relation_size('idempotency_record') AS heap,"
					+ " pg_indexes_size('idempotency_record') AS indexes FROM idempotency_record t")
				.query()
				.singleRow();
			long n = ((Number) row.get("n")).longValue();
			System.out.printf(Locale.ROOT,
					"| postgresql | %d | **%d** total (heap %d, indexes %d, toast %d); row %.0f, response column %.0f |"
							+ " pg_total_relation_size / count, avg(pg_column_size(row)) |%n",
					n, ((Number) row.get("total")).longValue() / n, ((Number) row.get("heap")).longValue() / n,
					((Number) row.get("indexes")).longValue() / n,
					(((Number) row.get("total")).longValue() - ((Number) row.get("heap")).longValue()
							- ((Number) row.get("indexes")).longValue()) / n,
					((Number) row.get("row_bytes")).doubleValue(), ((Number) row.get("response_bytes")).doubleValue());
		}
		try (BenchStores redis = new BenchStores("redis", 0)) {
			fill(redis.store, records);
			long total = 0;
			int sampled = 0;
			try (RedisConnection connection = redis.redis().getConnection();
					Cursor<byte[]> keys = connection.keyCommands()
						.scan(ScanOptions.scanOptions().match(redis.redisPrefix() + "*").count(1000).build())) {
				while (keys.hasNext() && sampled < 1000) {
					// SAMPLES 0: every field of the hash counted, not an estimate from
					// five of them.
					@SuppressWarnings("unchecked")
					var lettuce = (io.lettuce.core.api.async.RedisAsyncCommands<byte[], byte[]>) connection
						.getNativeConnection();
					var codec = io.lettuce.core.codec.ByteArrayCodec.INSTANCE;
					total += lettuce
						.dispatch(io.lettuce.core.protocol.CommandType.MEMORY,
								new io.lettuce.core.output.IntegerOutput<>(codec),
								new io.lettuce.core.protocol.CommandArgs<>(codec).add("USAGE")
									.addKey(keys.next())
									.add("SAMPLES")
									.add(0))
						.get();
					sampled++;
				}
			}
			System.out.printf(Locale.ROOT, "| redis | %d | **%d** | MEMORY USAGE key SAMPLES 0, mean of %d keys |%n",
					records, total / sampled, sampled);
		}
		System.out.println();
		System.out.println("| store / mode | per protected call (lease: reserve + complete; record-after-success:"
				+ " find + recordCompleted), mean of " + ROUND_TRIP_CALLS + " calls | replay of a completed key |");
		System.out.println("|---|---|---|");
		for (IdempotencySettings.Mode mode : IdempotencySettings.Mode.values()) {
			String modeName = mode.name().toLowerCase(Locale.ROOT).replace('_', '-');
			for (String name : List.of("h2", "postgresql", "mariadb")) {
				try (BenchStores stores = new BenchStores(name, 4)) {
					IdempotencyEngine engine = engine(stores.store, mode);
					String replayKey = TestKeys.newKey();
					cycle(engine, replayKey);
					stores.statements.set(0);
					stores.commits.set(0);
					for (int i = 0; i < ROUND_TRIP_CALLS; i++) {
						cycle(engine, TestKeys.newKey());
					}
					String fresh = String.format(Locale.ROOT, "%.2f statements + %.2f commits",
							stores.statements.get() / (double) ROUND_TRIP_CALLS,
							stores.commits.get() / (double) ROUND_TRIP_CALLS);
					stores.statements.set(0);
					stores.commits.set(0);
					for (int i = 0; i < ROUND_TRIP_CALLS; i++) {
						engine.begin(EngineBenchmark.call(replayKey));
					}
					System.out.printf(Locale.ROOT, "| %s / %s | %s | %.2f statements + %.2f commits |%n", name,
							modeName, fresh, stores.statements.get() / (double) ROUND_TRIP_CALLS,
							stores.commits.get() / (double) ROUND_TRIP_CALLS);
					engine.close();
				}
			}
			try (BenchStores stores = new BenchStores("redis", 0)) {
				Map<String, LongAdder> commands = new ConcurrentHashMap<>();
				IdempotencyStore counted = RedisIdempotencyStore
					.builder(counting(stores.redis(), commands), stores.redisPrefix())
					.build();
				IdempotencyEngine engine = engine(counted, mode);
				String replayKey = TestKeys.newKey();
				cycle(engine, replayKey);
				cycle(engine, TestKeys.newKey());
				commands.clear();
				for (int i = 0; i < ROUND_TRIP_CALLS; i++) {
					cycle(engine, TestKeys.newKey());
				}
				String fresh = perCall(commands);
				commands.clear();
				for (int i = 0; i < ROUND_TRIP_CALLS; i++) {
					engine.begin(EngineBenchmark.call(replayKey));
				}
				System.out.printf(Locale.ROOT, "| redis / %s | %s | %s |%n", modeName, fresh, perCall(commands));
				engine.close();
			}
		}
		System.exit(0);
	}

	private static void memory(int records) {
		IdempotencyStore store = InMemoryIdempotencyStore.builder()
			.clock(Clock.systemUTC())
			.maxEntries(Integer.MAX_VALUE)
			.maxBytes(Long.MAX_VALUE)
			.maxSharePerScope(1.0)
			.onFull(InMemoryIdempotencyStore.OnFull.REFUSE)
			.build();
		// Keys made up front, so that only the store's own objects are counted.
		List<String> keys = new ArrayList<>(records);
		for (int i = 0; i < records; i++) {
			keys.add(TestKeys.newKey());
		}
		long before = usedAfterGc();
		for (String key : keys) {
			complete(store, key);
		}
		long after = usedAfterGc();
		System.out.printf(Locale.ROOT, "| memory | %d | **%d** | used heap after GC, before and after (%s) |%n",
				records, (after - before) / records, store.name());
	}

	private static void fill(IdempotencyStore store, int records) {
		for (int i = 0; i < records; i++) {
			complete(store, TestKeys.newKey());
		}
	}

	private static void complete(IdempotencyStore store, String key) {
		IdempotencySettings settings = IdempotencySettings.defaults();
		RecordId id = new RecordId("anonymous", key);
		String owner = java.util.UUID.randomUUID().toString();
		store.reserve(new ReserveRequest(id, "0".repeat(64), "createTable", owner, settings.lease().duration(),
				settings.retention()));
		store.complete(id, owner, EngineBenchmark.Payloads.RESPONSE);
	}

	private static IdempotencyEngine engine(IdempotencyStore store, IdempotencySettings.Mode mode) {
		return new IdempotencyEngine(store, IdempotencySettings.builder().mode(mode).build(), Clock.systemUTC(),
				IdempotencyListener.NONE);
	}

	private static void cycle(IdempotencyEngine engine, String key) {
		Decision decision = engine.begin(EngineBenchmark.call(key));
		engine.succeeded(((Decision.Proceed) decision).reservation(), EngineBenchmark.Payloads.RESPONSE);
	}

	private static String perCall(Map<String, LongAdder> commands) {
		Map<String, String> perCall = new TreeMap<>();
		commands.forEach((name, count) -> perCall.put(name,
				String.format(Locale.ROOT, "%.2f", count.sum() / (double) ROUND_TRIP_CALLS)));
		return perCall.toString();
	}

	private static final Set<String> NOT_COMMANDS = Set.of("close", "isClosed", "getNativeConnection", "isQueueing",
			"isPipelined", "getSentinelConnection", "hashCode", "equals", "toString");

	/** Counts every command sent on the store's connections, by method name. */
	private static RedisConnectionFactory counting(RedisConnectionFactory target, Map<String, LongAdder> commands) {
		return (RedisConnectionFactory) Proxy.newProxyInstance(StoreFootprint.class.getClassLoader(),
				new Class<?>[] { RedisConnectionFactory.class }, (proxy, method, args) -> {
					Object result = invoke(method, target, args);
					if (result instanceof RedisConnection connection) {
						return Proxy.newProxyInstance(StoreFootprint.class.getClassLoader(),
								new Class<?>[] { RedisConnection.class }, (p, m, a) -> {
									Object value = invoke(m, connection, a);
									if (m.getName().endsWith("Commands") && m.getReturnType().isInterface()
											&& value != null) {
										// scriptingCommands().evalSha(...) and the
										// like: count the calls on the group.
										return countingGroup(m.getReturnType(), value, commands);
									}
									if (!NOT_COMMANDS.contains(m.getName())) {
										commands.computeIfAbsent(m.getName(), (k) -> new LongAdder()).increment();
									}
									return value;
								});
					}
					return result;
				});
	}

	private static Object countingGroup(Class<?> type, Object group, Map<String, LongAdder> commands) {
		return Proxy.newProxyInstance(StoreFootprint.class.getClassLoader(), new Class<?>[] { type }, (p, m, a) -> {
			if (!NOT_COMMANDS.contains(m.getName())) {
				commands.computeIfAbsent(m.getName(), (k) -> new LongAdder()).increment();
			}
			return invoke(m, group, a);
		});
	}

	private static Object invoke(java.lang.reflect.Method method, Object target, Object[] args) throws Throwable {
		try {
			return method.invoke(target, args);
		}
		catch (InvocationTargetException ex) {
			throw ex.getCause();
		}
	}

	private static long usedAfterGc() {
		Runtime runtime = Runtime.getRuntime();
		for (int i = 0; i < 4; i++) {
			System.gc();
			try {
				Thread.sleep(100);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
		return runtime.totalMemory() - runtime.freeMemory();
	}

	private static byte[] bytes(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
	}

}
