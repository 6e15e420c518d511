package dev.idempotency.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import dev.idempotency.core.IdempotencyListener;
import dev.idempotency.core.IdempotencySettings;
import dev.idempotency.core.KeyFormat;
import dev.idempotency.core.internal.Decision;
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
 * handler (Boot's default with Actuator), interleaved round by round so that a loaded
 * machine weighs on all three alike; the median of the rounds after five of warm-up.
 * Thread CPU time rather than wall time: on a shared machine the JMH
 * {@link ObservationBenchmark} varies more than the difference. Run:
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
		ThreadMXBean mx = ManagementFactory.getThreadMXBean();
		Map<String, IdempotencyEngine> engines = new LinkedHashMap<>();
		Map<String, String> replayKeys = new HashMap<>();
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
			String k = UUID.randomUUID().toString();
			e.succeeded(((Decision.Proceed) e.begin(call(k))).reservation(), RESPONSE);
			replayKeys.put(n, k);
		}
		Map<String, List<Double>> fresh = new HashMap<>(), replay = new HashMap<>();
		for (int r = 0; r < rounds; r++) {
			List<String> order = new ArrayList<>(List.of(names));
			Collections.rotate(order, r);
			for (String n : order) {
				IdempotencyEngine e = engines.get(n);
				String[] keys = new String[ops];
				for (int i = 0; i < ops; i++)
					keys[i] = UUID.randomUUID().toString();
				long t0 = mx.getCurrentThreadCpuTime();
				for (int i = 0; i < ops; i++) {
					e.succeeded(((Decision.Proceed) e.begin(call(keys[i]))).reservation(), RESPONSE);
				}
				long t1 = mx.getCurrentThreadCpuTime();
				String k = replayKeys.get(n);
				for (int i = 0; i < ops; i++) {
					if (!(e.begin(call(k)) instanceof Decision.Replay))
						throw new IllegalStateException();
				}
				long t2 = mx.getCurrentThreadCpuTime();
				if (r >= 5) {
					fresh.computeIfAbsent(n, (name) -> new ArrayList<>()).add((t1 - t0) / 1000.0 / ops);
					replay.computeIfAbsent(n, (name) -> new ArrayList<>()).add((t2 - t1) / 1000.0 / ops);
				}
			}
		}
		for (String n : names) {
			System.out.printf("%-11s freshKey %.2f us (p25 %.2f p75 %.2f)  replay %.2f us (p25 %.2f p75 %.2f)%n", n,
					q(fresh.get(n), .5), q(fresh.get(n), .25), q(fresh.get(n), .75), q(replay.get(n), .5),
					q(replay.get(n), .25), q(replay.get(n), .75));
		}
		engines.values().forEach(IdempotencyEngine::close);
	}

	static double q(List<Double> v, double p) {
		List<Double> s = new ArrayList<>(v);
		Collections.sort(s);
		return s.get((int) Math.round(p * (s.size() - 1)));
	}

}
