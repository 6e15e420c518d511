package dev.idempotency.bench;

import java.time.Clock;
import java.util.concurrent.TimeUnit;

import dev.idempotency.core.IdempotencyListener;
import dev.idempotency.core.IdempotencySettings;
import dev.idempotency.core.internal.Decision;
import dev.idempotency.core.internal.IdempotencyEngine;
import dev.idempotency.store.StoredResponse;
import dev.idempotency.store.memory.InMemoryIdempotencyStore;
import dev.idempotency.test.TestKeys;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What the {@code idempotency.request} observation adds to the engine on the in-memory
 * store, {@link EngineBenchmark}'s calls: {@code none} is no ObservationRegistry (the
 * starter without Actuator), {@code no-handler} a registry without handlers (nothing
 * observes), {@code metrics} Boot's default with Actuator: a timer and a long task timer
 * per observation ({@link DefaultMeterObservationHandler}).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 1, jvmArgsAppend = { "-Xms2g", "-Xmx2g" })
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class ObservationBenchmark {

	@Param({ "none", "no-handler", "metrics" })
	public String registry;

	private IdempotencyEngine engine;

	private String replayKey;

	/**
	 * A new store per iteration: the fresh keys of one iteration fit, none is evicted.
	 */
	@Setup(Level.Iteration)
	public void setUp() {
		ObservationRegistry observations = switch (this.registry) {
			case "none" -> ObservationRegistry.NOOP;
			case "no-handler" -> ObservationRegistry.create();
			default -> {
				ObservationRegistry withMetrics = ObservationRegistry.create();
				withMetrics.observationConfig()
					.observationHandler(new DefaultMeterObservationHandler(new SimpleMeterRegistry()));
				yield withMetrics;
			}
		};
		this.engine = new IdempotencyEngine(
				InMemoryIdempotencyStore.builder()
					.clock(Clock.systemUTC())
					.maxEntries(Integer.MAX_VALUE)
					.maxBytes(1L << 30)
					.maxSharePerScope(1.0)
					// Evicts the oldest at its bounds instead of refusing.
					.onFull(InMemoryIdempotencyStore.OnFull.EVICT)
					.build(),
				IdempotencySettings.defaults(), Clock.systemUTC(), IdempotencyListener.NONE, observations, false);
		this.replayKey = TestKeys.newKey();
		Decision first = this.engine.begin(EngineBenchmark.call(this.replayKey));
		this.engine.succeeded(((Decision.Proceed) first).reservation(), EngineBenchmark.Payloads.RESPONSE);
	}

	@TearDown(Level.Iteration)
	public void tearDown() {
		this.engine.close();
	}

	@Benchmark
	public Decision freshKey() {
		Decision decision = this.engine.begin(EngineBenchmark.call(TestKeys.newKey()));
		this.engine.succeeded(((Decision.Proceed) decision).reservation(), EngineBenchmark.Payloads.RESPONSE);
		return decision;
	}

	@Benchmark
	public StoredResponse replay() {
		return ((Decision.Replay) this.engine.begin(EngineBenchmark.call(this.replayKey))).response();
	}

}
