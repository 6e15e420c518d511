package dev.idempotency.autoconfigure;

import java.util.Locale;
import java.util.concurrent.TimeUnit;

import dev.idempotency.engine.IdempotencyListener;
import dev.idempotency.engine.IdempotencyOutcome;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

/**
 * Counts outcomes as {@code idempotency.requests} tagged {@code outcome}, {@code operation} and
 * {@code store}, and times store calls as {@code idempotency.store.calls} tagged {@code call},
 * {@code store} and {@code outcome} ({@code success} or {@code error}).
 */
public class MicrometerIdempotencyListener implements IdempotencyListener {

	/** Name of the counter. */
	public static final String METER_NAME = "idempotency.requests";

	/** Name of the store call timer. */
	public static final String TIMER_NAME = "idempotency.store.calls";

	private final MeterRegistry registry;

	private final String store;

	public MicrometerIdempotencyListener(MeterRegistry registry, String store) {
		this.registry = registry;
		this.store = store;
	}

	@Override
	public void onOutcome(IdempotencyOutcome outcome, String operation) {
		Counter.builder(METER_NAME)
			.description("Requests and operations handled by the Idempotency-Key support, by outcome")
			.tag("outcome", outcome.name().toLowerCase(Locale.ROOT))
			.tag("operation", operation)
			.tag("store", this.store)
			.register(this.registry)
			.increment();
	}

	@Override
	public void onStoreCall(String call, long nanos, boolean failed) {
		Timer.builder(TIMER_NAME)
			.description("Calls to the idempotency store")
			.tag("call", call)
			.tag("store", this.store)
			.tag("outcome", failed ? "error" : "success")
			.register(this.registry)
			.record(nanos, TimeUnit.NANOSECONDS);
	}

}
