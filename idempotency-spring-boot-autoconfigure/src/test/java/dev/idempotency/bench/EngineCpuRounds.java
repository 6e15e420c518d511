package dev.idempotency.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;

import dev.idempotency.core.internal.Decision;
import dev.idempotency.core.internal.IdempotencyEngine;
import dev.idempotency.core.internal.IdempotentCall;
import dev.idempotency.store.StoredResponse;

/**
 * Thread CPU time per engine call, for engines compared with each other: round by round,
 * each in turn (the order rotating per round, so that a loaded machine weighs on all
 * alike), {@code ops} calls with fresh keys (begin and succeeded) and {@code ops} replays
 * of the last of them (begin); the median and quartiles of the rounds after five of
 * warm-up. Thread CPU time rather than wall time: on a shared machine, JMH's wall times
 * vary more than the differences measured.
 */
final class EngineCpuRounds {

	private static final int WARMUP_ROUNDS = 5;

	private EngineCpuRounds() {
	}

	/**
	 * Measures each engine; {@code call} makes the call of a key in the UUID format.
	 * @return each engine's cost, by its name, in the engines' order
	 */
	static Map<String, Cost> measure(Map<String, IdempotencyEngine> engines, Function<String, IdempotentCall> call,
			StoredResponse response, int ops, int rounds) {
		ThreadMXBean mx = ManagementFactory.getThreadMXBean();
		Map<String, List<Double>> fresh = new LinkedHashMap<>();
		Map<String, List<Double>> replay = new LinkedHashMap<>();
		engines.keySet().forEach((name) -> {
			fresh.put(name, new ArrayList<>());
			replay.put(name, new ArrayList<>());
		});
		for (int round = 0; round < rounds; round++) {
			List<String> order = new ArrayList<>(engines.keySet());
			Collections.rotate(order, round);
			for (String name : order) {
				IdempotencyEngine engine = engines.get(name);
				String[] keys = new String[ops];
				for (int i = 0; i < ops; i++) {
					keys[i] = UUID.randomUUID().toString();
				}
				long start = mx.getCurrentThreadCpuTime();
				for (int i = 0; i < ops; i++) {
					engine.succeeded(((Decision.Proceed) engine.begin(call.apply(keys[i]))).reservation(), response);
				}
				long freshEnd = mx.getCurrentThreadCpuTime();
				// The round's last key: a bounded store evicts the oldest records first.
				IdempotentCall replayCall = call.apply(keys[ops - 1]);
				for (int i = 0; i < ops; i++) {
					if (!(engine.begin(replayCall) instanceof Decision.Replay)) {
						throw new IllegalStateException(name + ": no replay");
					}
				}
				long end = mx.getCurrentThreadCpuTime();
				if (round >= WARMUP_ROUNDS) {
					fresh.get(name).add((freshEnd - start) / 1000.0 / ops);
					replay.get(name).add((end - freshEnd) / 1000.0 / ops);
				}
			}
		}
		Map<String, Cost> costs = new LinkedHashMap<>();
		engines.keySet().forEach((name) -> costs.put(name, new Cost(fresh.get(name), replay.get(name))));
		return costs;
	}

	/**
	 * One engine's thread CPU per call, in µs: the median and quartiles of the rounds.
	 */
	record Cost(List<Double> fresh, List<Double> replay) {

		double freshKey() {
			return quantile(this.fresh, 0.5);
		}

		double replayed() {
			return quantile(this.replay, 0.5);
		}

		@Override
		public String toString() {
			return String.format("freshKey %.2f us (p25 %.2f p75 %.2f)  replay %.2f us (p25 %.2f p75 %.2f)", freshKey(),
					quantile(this.fresh, 0.25), quantile(this.fresh, 0.75), replayed(), quantile(this.replay, 0.25),
					quantile(this.replay, 0.75));
		}

		private static double quantile(List<Double> values, double p) {
			List<Double> sorted = new ArrayList<>(values);
			Collections.sort(sorted);
			return sorted.get((int) Math.round(p * (sorted.size() - 1)));
		}

	}

}
