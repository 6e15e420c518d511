package dev.idempotency.bench;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.idempotency.core.IdempotencyListener;
import dev.idempotency.core.IdempotencySettings;
import dev.idempotency.core.internal.IdempotencyEngine;
import dev.idempotency.store.StoredResponse;
import dev.idempotency.store.seal.Sealing;
import dev.idempotency.store.seal.SealingKeys;
import io.micrometer.observation.ObservationRegistry;

/**
 * What sealing adds in CPU per call, on an answer of 300 bytes (the light endpoint's
 * size), per store, the sealed engine beside the plain one over the same store in the
 * same run ({@link EngineCpuRounds}): a fresh key seals one answer and keys one
 * fingerprint, a replay opens one answer and keys one fingerprint. Thread CPU of the
 * calling thread, where sealing runs: for Redis and PostgreSQL it leaves out the driver's
 * I/O threads and the server, which sealing does not touch (it adds 31 bytes and the key
 * id to what they carry). Run:
 * {@code java -Xmx2g -cp <test classpath> dev.idempotency.bench.SealingCpuCost [stores] [rounds]}
 * (stores: {@code memory,postgresql,redis}).
 */
public final class SealingCpuCost {

	/** A JSON answer of 300 bytes with its two headers, as the light endpoint answers. */
	static final StoredResponse ANSWER = new StoredResponse(201,
			Map.of("Content-Type", List.of("application/json"), "Location", List.of("/orders/8f14e45f")),
			("{\"id\":\"8f14e45f-ceea-467f-a0e6-f0c8e6e9d2b1\",\"item\":\"" + "x".repeat(216)
					+ "\",\"quantity\":3,\"total\":\"42.00\"}")
				.getBytes(StandardCharsets.UTF_8));

	private SealingCpuCost() {
	}

	public static void main(String[] args) throws Exception {
		String stores = (args.length > 0) ? args[0] : "memory,postgresql,redis";
		int rounds = Integer.parseInt((args.length > 1) ? args[1] : "25");
		Sealing sealing = Sealing.of(SealingKeys.of(Map.of("k1", new byte[32]), "k1"), false);
		System.out.println("| store | fresh key, plain | sealed | added | replay, plain | sealed | added |");
		System.out.println("|---|---|---|---|---|---|---|");
		for (String name : stores.split(",")) {
			// Fewer calls per round where each one is a round trip.
			int ops = name.equals("memory") ? 20_000 : 1_000;
			try (BenchStores store = new BenchStores(name, 4)) {
				Map<String, IdempotencyEngine> engines = new LinkedHashMap<>();
				engines.put("plain", engine(store, Sealing.none()));
				engines.put("sealed", engine(store, sealing));
				Map<String, EngineCpuRounds.Cost> costs = EngineCpuRounds.measure(engines, ObservationCpuCost::call,
						ANSWER, ops, rounds);
				engines.values().forEach(IdempotencyEngine::close);
				EngineCpuRounds.Cost plain = costs.get("plain");
				EngineCpuRounds.Cost sealed = costs.get("sealed");
				System.out.printf("| %s | %.1f µs | %.1f µs | %+.1f µs | %.1f µs | %.1f µs | %+.1f µs |%n", name,
						plain.freshKey(), sealed.freshKey(), sealed.freshKey() - plain.freshKey(), plain.replayed(),
						sealed.replayed(), sealed.replayed() - plain.replayed());
				costs.forEach((variant, cost) -> System.err.printf("%s %-6s %s%n", name, variant, cost));
			}
		}
		System.exit(0);
	}

	private static IdempotencyEngine engine(BenchStores store, Sealing sealing) {
		return new IdempotencyEngine(store.store, IdempotencySettings.defaults(), Clock.systemUTC(),
				IdempotencyListener.NONE, ObservationRegistry.NOOP, false, sealing);
	}

}
