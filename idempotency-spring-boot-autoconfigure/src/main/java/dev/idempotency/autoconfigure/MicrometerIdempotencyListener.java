package dev.idempotency.autoconfigure;

import java.util.Locale;

import dev.idempotency.engine.IdempotencyListener;
import dev.idempotency.engine.IdempotencyOutcome;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * Counts outcomes as {@code idempotency.requests} tagged {@code outcome}, {@code operation} and
 * {@code store}.
 */
public class MicrometerIdempotencyListener implements IdempotencyListener {

	/** Name of the counter. */
	public static final String METER_NAME = "idempotency.requests";

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

}
