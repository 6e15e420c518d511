package dev.idempotency.bench;

import java.time.Clock;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import dev.idempotency.store.IdempotencyStoreFullException;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.ReserveRequest;
import dev.idempotency.store.memory.InMemoryIdempotencyStore;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What a new key costs when the in-memory store is full of live records: the refusal, for
 * a store of 1,000 and of 100,000 records. Before the expiry index each refusal walked
 * every record, so its cost grew with the store; now it should not.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 1, jvmArgsAppend = { "-Xms1g", "-Xmx1g" })
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
public class InMemoryFullStoreBenchmark {

	@Param({ "1000", "100000" })
	public int records;

	private InMemoryIdempotencyStore store;

	@Setup
	public void fill() {
		this.store = InMemoryIdempotencyStore.builder()
			.clock(Clock.systemUTC())
			.maxEntries(this.records)
			.maxBytes(Long.MAX_VALUE)
			.maxSharePerScope(1.0)
			.onFull(InMemoryIdempotencyStore.OnFull.REFUSE)
			.build();
		for (int i = 0; i < this.records; i++) {
			this.store.reserve(request());
		}
	}

	@Benchmark
	public Object refuseANewKey() {
		try {
			return this.store.reserve(request());
		}
		catch (IdempotencyStoreFullException refused) {
			return refused;
		}
	}

	private static ReserveRequest request() {
		return new ReserveRequest(new RecordId("user:bench", UUID.randomUUID().toString()), "fp", "op", "owner",
				Duration.ofHours(1), Duration.ofHours(2));
	}

}
