package dev.idempotency.autoconfigure;

import java.time.Clock;
import java.util.List;
import java.util.Map;

import dev.idempotency.core.IdempotencySettings;
import dev.idempotency.core.KeyFormat;
import dev.idempotency.core.internal.Decision;
import dev.idempotency.core.internal.IdempotencyEngine;
import dev.idempotency.core.internal.IdempotentCall;
import dev.idempotency.core.internal.Reservation;
import dev.idempotency.store.StoredResponse;
import dev.idempotency.store.memory.InMemoryIdempotencyStore;
import dev.idempotency.test.TestKeys;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Each request counts once in idempotency.requests; what became of a run counts in
 * idempotency.executions.
 */
class MicrometerIdempotencyListenerTests {

	private final MeterRegistry registry = new SimpleMeterRegistry();

	private final IdempotencyEngine engine = new IdempotencyEngine(
			InMemoryIdempotencyStore.builder()
				.clock(Clock.systemUTC())
				.maxEntries(100)
				.maxSharePerScope(1.0)
				.onFull(InMemoryIdempotencyStore.OnFull.REFUSE)
				.build(),
			IdempotencySettings.builder().maxBodyBytes(4).build(), Clock.systemUTC(),
			new MicrometerIdempotencyListener(this.registry, "memory"));

	@AfterEach
	void close() {
		this.engine.close();
	}

	@Test
	void aRequestThatRunsAndIsStoredCountsOnceAsExecutedAndItsRunOnceAsCompleted() {
		String key = TestKeys.newKey();
		Reservation owner = ((Decision.Proceed) this.engine.begin(call(key))).reservation();
		this.engine.succeeded(owner, new StoredResponse(201, Map.of(), new byte[] { 1 }));
		assertThat(requests()).containsExactlyInAnyOrderEntriesOf(Map.of("executed", 1.0));
		assertThat(executions()).containsExactlyInAnyOrderEntriesOf(Map.of("completed", 1.0));

		this.engine.begin(call(key));
		assertThat(requests()).containsExactlyInAnyOrderEntriesOf(Map.of("executed", 1.0, "replayed", 1.0));
		assertThat(executions()).containsExactlyInAnyOrderEntriesOf(Map.of("completed", 1.0));
	}

	@Test
	void aBodyTooLargeCountsOnceNotAlsoAsReleased() {
		Reservation owner = ((Decision.Proceed) this.engine.begin(call(TestKeys.newKey()))).reservation();
		this.engine.succeeded(owner, new StoredResponse(201, Map.of(), new byte[] { 1, 2, 3, 4, 5 }));
		assertThat(requests()).containsExactlyInAnyOrderEntriesOf(Map.of("executed", 1.0));
		assertThat(executions()).containsExactlyInAnyOrderEntriesOf(Map.of("body_too_large", 1.0));
	}

	@Test
	void aFailedRunCountsAsReleased() {
		Reservation owner = ((Decision.Proceed) this.engine.begin(call(TestKeys.newKey()))).reservation();
		this.engine.failed(owner, "boom");
		assertThat(requests()).containsExactlyInAnyOrderEntriesOf(Map.of("executed", 1.0));
		assertThat(executions()).containsExactlyInAnyOrderEntriesOf(Map.of("released", 1.0));
	}

	private Map<String, Double> requests() {
		return counts(MicrometerIdempotencyListener.METER_NAME, "outcome");
	}

	private Map<String, Double> executions() {
		return counts(MicrometerIdempotencyListener.EXECUTIONS_METER_NAME, "result");
	}

	private Map<String, Double> counts(String name, String tag) {
		Map<String, Double> counts = new java.util.TreeMap<>();
		for (Counter counter : this.registry.find(name).counters()) {
			assertThat(counter.getId().getTag("operation")).isEqualTo("op");
			assertThat(counter.getId().getTag("store")).isEqualTo("memory");
			counts.merge(counter.getId().getTag(tag), counter.count(), Double::sum);
		}
		counts.values().removeIf((count) -> count == 0);
		return counts;
	}

	private static IdempotentCall call(String key) {
		return new IdempotentCall("scope", List.of(key), KeyFormat.UUID_V7, false, "op", () -> "fp");
	}

}
