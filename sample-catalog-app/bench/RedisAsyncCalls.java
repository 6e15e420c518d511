import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;

import dev.idempotency.store.RecordId;
import dev.idempotency.store.ReserveRequest;
import dev.idempotency.store.ReserveResult;
import dev.idempotency.store.StoredResponse;
import dev.idempotency.store.redis.RedisIdempotencyStore;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * What the Redis store's non-blocking path (a reactive door's) allocates and spends per
 * {@code reserveAsync} and {@code completeAsync}, in a loop of store calls on one thread
 * that waits for each: the bytes allocated by every thread of this JVM (Lettuce's event
 * loop and the timer included) and their CPU time, per pair, after a warm-up. Redis on
 * 127.0.0.1:6379, keys under {@code redis-async-calls:}, deleted at the end.
 * <p>
 * From sample-catalog-app, after building target/cp.txt as docs/benchmarks.md says:
 * <pre>
 * java -Xms512m -Xmx512m -cp target/test-classes:target/classes:$(cat target/cp.txt) \
 *     bench/RedisAsyncCalls.java [rounds 5] [pairs per round 10000]
 * </pre>
 */
public class RedisAsyncCalls {

	private static final String PREFIX = "redis-async-calls:";

	public static void main(String[] args) throws Exception {
		int rounds = (args.length > 0) ? Integer.parseInt(args[0]) : 5;
		int perRound = (args.length > 1) ? Integer.parseInt(args[1]) : 10000;
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", 6379));
		factory.afterPropertiesSet();
		factory.start();
		RedisIdempotencyStore store = RedisIdempotencyStore.builder(factory, PREFIX).build();
		Executor executor = Executors.newSingleThreadExecutor();
		StoredResponse response = new StoredResponse(201, Map.of("Content-Type", List.of("application/json")),
				"{\"id\":1,\"item\":\"book\",\"quantity\":1}".getBytes());
		pairs(store, executor, response, 50_000);
		var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
		long[] bytes = new long[rounds];
		double[] cpu = new double[rounds];
		for (int round = 0; round < rounds; round++) {
			long[] ids = threads.getAllThreadIds();
			long[] allocatedBefore = threads.getThreadAllocatedBytes(ids);
			long[] cpuBefore = threads.getThreadCpuTime(ids);
			pairs(store, executor, response, perRound);
			long[] allocatedAfter = threads.getThreadAllocatedBytes(ids);
			long[] cpuAfter = threads.getThreadCpuTime(ids);
			long allocated = 0;
			long nanos = 0;
			for (int i = 0; i < ids.length; i++) {
				if (allocatedBefore[i] >= 0 && allocatedAfter[i] >= 0) {
					allocated += allocatedAfter[i] - allocatedBefore[i];
				}
				if (cpuBefore[i] >= 0 && cpuAfter[i] >= 0) {
					nanos += cpuAfter[i] - cpuBefore[i];
				}
			}
			bytes[round] = allocated / perRound;
			cpu[round] = nanos / 1000.0 / perRound;
			System.out.printf("round %d: %d bytes, %.1f µs CPU per reserveAsync + completeAsync%n", round,
					bytes[round], cpu[round]);
		}
		Arrays.sort(bytes);
		Arrays.sort(cpu);
		System.out.printf("median: %d bytes, %.1f µs CPU per pair (every thread)%n", bytes[rounds / 2],
				cpu[rounds / 2]);
		new ProcessBuilder("sh", "-c", "redis-cli -h 127.0.0.1 --scan --pattern '" + PREFIX
				+ "*' | xargs -r -n 1000 redis-cli -h 127.0.0.1 del > /dev/null")
			.inheritIO()
			.start()
			.waitFor();
		System.exit(0);
	}

	private static void pairs(RedisIdempotencyStore store, Executor executor, StoredResponse response, int count) {
		for (int i = 0; i < count; i++) {
			RecordId id = new RecordId("anonymous", UUID.randomUUID().toString());
			String owner = "owner-" + i;
			ReserveResult reserved = store
				.reserveAsync(new ReserveRequest(id, "fingerprint", "orders", owner, Duration.ofSeconds(30),
						Duration.ofMinutes(5), false), executor)
				.toCompletableFuture()
				.join();
			if (!(reserved instanceof ReserveResult.Acquired)) {
				throw new IllegalStateException("not reserved: " + reserved);
			}
			if (!store.completeAsync(id, owner, response, executor).toCompletableFuture().join()) {
				throw new IllegalStateException("not completed");
			}
		}
	}

}
