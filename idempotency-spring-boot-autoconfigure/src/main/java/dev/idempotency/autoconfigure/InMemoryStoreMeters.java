package dev.idempotency.autoconfigure;

import java.util.concurrent.TimeUnit;

import dev.idempotency.store.memory.InMemoryIdempotencyStore;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.TimeGauge;

/**
 * The in-memory store's state as meters: records and bytes held, completed records
 * evicted to make room, and the age of the oldest record kept (while records are evicted,
 * the retention a key actually gets).
 */
final class InMemoryStoreMeters {

	/** Counter of completed records evicted to make room. */
	static final String EVICTIONS = "idempotency.store.memory.evictions";

	/** Age of the oldest record kept. */
	static final String OLDEST_AGE = "idempotency.store.memory.oldest.age";

	/** Records held, expired ones not yet dropped included. */
	static final String RECORDS = "idempotency.store.memory.records";

	/** Estimated bytes the records retain. */
	static final String BYTES = "idempotency.store.memory.bytes";

	private InMemoryStoreMeters() {
	}

	static void bind(InMemoryIdempotencyStore store, MeterRegistry registry) {
		FunctionCounter.builder(EVICTIONS, store, InMemoryIdempotencyStore::evictions)
			.description("Completed records the in-memory idempotency store evicted to make room")
			.register(registry);
		TimeGauge.builder(OLDEST_AGE, store, TimeUnit.MILLISECONDS, (memory) -> memory.oldestRecordAge().toMillis())
			.description("Age of the oldest record the in-memory idempotency store keeps: while it evicts,"
					+ " the retention a key actually gets")
			.register(registry);
		Gauge.builder(RECORDS, store, InMemoryIdempotencyStore::size)
			.description("Records the in-memory idempotency store holds")
			.register(registry);
		Gauge.builder(BYTES, store, InMemoryIdempotencyStore::retainedBytes)
			.description("Estimated bytes the in-memory idempotency store's records retain")
			.baseUnit("bytes")
			.register(registry);
	}

}
