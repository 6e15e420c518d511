package dev.idempotency.autoconfigure;

import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import dev.idempotency.core.ExecutionResult;
import dev.idempotency.core.IdempotencyListener;
import dev.idempotency.core.IdempotencyOutcome;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

/**
 * Binds the engine's events to Micrometer. Every request counts once in
 * idempotency.requests, tagged outcome (the engine's decision), operation and store;
 * every run under a reservation counts once, when it finishes, in idempotency.executions,
 * tagged result, operation and store; store calls are timed as idempotency.store.calls,
 * tagged call, store and outcome (success or error). The meters are described once, as
 * meter providers; each one is looked up by its tags the first time it is needed and then
 * kept, so that an event costs a map look-up and no tag building (a meter removed from
 * the registry afterwards is not registered again by this listener).
 *
 * @since 0.1.0
 */
public class MicrometerIdempotencyListener implements IdempotencyListener {

	/** Name of the counter of requests, one count per request. */
	public static final String METER_NAME = "idempotency.requests";

	/** Name of the counter of finished runs, one count per run. */
	public static final String EXECUTIONS_METER_NAME = "idempotency.executions";

	/** Name of the store call timer. */
	public static final String TIMER_NAME = "idempotency.store.calls";

	private final Meter.MeterProvider<Counter> requests;

	private final Meter.MeterProvider<Counter> executions;

	private final Meter.MeterProvider<Timer> storeCalls;

	private final Map<IdempotencyOutcome, Map<String, Counter>> requestsByOutcome = new EnumMap<>(
			IdempotencyOutcome.class);

	private final Map<ExecutionResult, Map<String, Counter>> executionsByResult = new EnumMap<>(ExecutionResult.class);

	private final Map<String, Timer> successfulStoreCalls = new ConcurrentHashMap<>();

	private final Map<String, Timer> failedStoreCalls = new ConcurrentHashMap<>();

	public MicrometerIdempotencyListener(MeterRegistry registry, String store) {
		this.requests = Counter.builder(METER_NAME)
			.description("Requests handled by the Idempotency-Key support, once each, by the engine's decision")
			.tag("store", store)
			.withRegistry(registry);
		this.executions = Counter.builder(EXECUTIONS_METER_NAME)
			.description("Operations run under an idempotency reservation, once each when finished, by result")
			.tag("store", store)
			.withRegistry(registry);
		this.storeCalls = Timer.builder(TIMER_NAME)
			.description("Calls to the idempotency store")
			.tag("store", store)
			.withRegistry(registry);
		for (IdempotencyOutcome outcome : IdempotencyOutcome.values()) {
			this.requestsByOutcome.put(outcome, new ConcurrentHashMap<>());
		}
		for (ExecutionResult result : ExecutionResult.values()) {
			this.executionsByResult.put(result, new ConcurrentHashMap<>());
		}
	}

	@Override
	public void onOutcome(IdempotencyOutcome outcome, String operation) {
		Map<String, Counter> byOperation = Objects.requireNonNull(this.requestsByOutcome.get(outcome));
		Counter counter = byOperation.get(operation);
		if (counter == null) {
			counter = byOperation.computeIfAbsent(operation, (name) -> this.requests.withTags("outcome",
					outcome.name().toLowerCase(Locale.ROOT), "operation", name));
		}
		counter.increment();
	}

	@Override
	public void onExecutionFinished(ExecutionResult result, String operation) {
		Map<String, Counter> byOperation = Objects.requireNonNull(this.executionsByResult.get(result));
		Counter counter = byOperation.get(operation);
		if (counter == null) {
			counter = byOperation.computeIfAbsent(operation, (name) -> this.executions.withTags("result",
					result.name().toLowerCase(Locale.ROOT), "operation", name));
		}
		counter.increment();
	}

	@Override
	public void onStoreCall(String call, long nanos, boolean failed) {
		Map<String, Timer> byCall = failed ? this.failedStoreCalls : this.successfulStoreCalls;
		Timer timer = byCall.get(call);
		if (timer == null) {
			timer = byCall.computeIfAbsent(call,
					(name) -> this.storeCalls.withTags("call", name, "outcome", failed ? "error" : "success"));
		}
		timer.record(nanos, TimeUnit.NANOSECONDS);
	}

}
