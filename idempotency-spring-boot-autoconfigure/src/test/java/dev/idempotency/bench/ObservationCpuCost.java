package dev.idempotency.bench;

import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.idempotency.core.IdempotencyListener;
import dev.idempotency.core.IdempotencySettings;
import dev.idempotency.core.KeyFormat;
import dev.idempotency.core.internal.Fingerprints;
import dev.idempotency.core.internal.IdempotencyEngine;
import dev.idempotency.core.internal.IdempotentCall;
import dev.idempotency.store.StoredResponse;
import dev.idempotency.store.memory.InMemoryIdempotencyStore;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;

/**
 * What the {@code idempotency.request} observation costs the engine in CPU, on the
 * in-memory store: thread CPU time per call (fresh key: begin and succeeded; replay:
 * begin), with no registry, a registry without handlers, and one with Micrometer's meter
 * handler (Boot's default with Actuator), interleaved round by round
 * ({@link EngineCpuRounds}): on a shared machine the JMH {@link ObservationBenchmark}
 * varies more than the difference. Run:
 * {@code java -Xmx3g -cp <test classpath> dev.idempotency.bench.ObservationCpuCost [calls per round] [rounds]}.
 */
public final class ObservationCpuCost {

	private ObservationCpuCost() {
	}

	static final StoredResponse RESPONSE = new StoredResponse(200, Map.of("Content-Type", List.of("application/json")),
			new byte[2048]);
	static final byte[] REQUEST = new byte[2048];

	static ObservationRegistry registry(String name) {
		return switch (name) {
			case "none" -> ObservationRegistry.NOOP;
			case "no-handler" -> ObservationRegistry.create();
			default -> {
				ObservationRegistry r = ObservationRegistry.create();
				r.observationConfig().observationHandler(new DefaultMeterObservationHandler(new SimpleMeterRegistry()));
				yield r;
			}
		};
	}

	static IdempotentCall call(String key) {
		return new IdempotentCall("anonymous", List.of(key), KeyFormat.UUID, false, "createTable",
				() -> Fingerprints.http("POST", "/v1/namespaces/bench/tables", null, "application/json", REQUEST));
	}

	public static void main(String[] args) {
		String[] names = { "none", "no-handler", "metrics" };
		int ops = Integer.parseInt(args.length > 0 ? args[0] : "20000");
		int rounds = Integer.parseInt(args.length > 1 ? args[1] : "30");
		Map<String, IdempotencyEngine> engines = new LinkedHashMap<>();
		for (String n : names) {
			IdempotencyEngine e = new IdempotencyEngine(
					InMemoryIdempotencyStore.builder()
						.clock(Clock.systemUTC())
						.maxEntries(Integer.MAX_VALUE)
						.maxBytes(1L << 31)
						.maxSharePerScope(1.0)
						// Evicts the oldest at its bounds instead of refusing.
						.onFull(InMemoryIdempotencyStore.OnFull.EVICT)
						.build(),
					IdempotencySettings.defaults(), Clock.systemUTC(), IdempotencyListener.NONE, registry(n), false);
			engines.put(n, e);
		}
		EngineCpuRounds.measure(engines, ObservationCpuCost::call, RESPONSE, ops, rounds)
			.forEach((n, cost) -> System.out.printf("%-11s %s%n", n, cost));
		engines.values().forEach(IdempotencyEngine::close);
	}

}
