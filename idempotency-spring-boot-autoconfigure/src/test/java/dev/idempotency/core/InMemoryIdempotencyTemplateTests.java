package dev.idempotency.core;

import java.time.Clock;

import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.memory.InMemoryIdempotencyStore;

/** {@link IdempotencyTemplateTests} on the in-memory store. */
class InMemoryIdempotencyTemplateTests extends IdempotencyTemplateTests {

	private final InMemoryIdempotencyStore store = InMemoryIdempotencyStore.builder()
		.clock(Clock.systemUTC())
		.maxEntries(1000)
		.maxSharePerScope(1.0)
		.onFull(InMemoryIdempotencyStore.OnFull.REFUSE)
		.build();

	@Override
	protected IdempotencyStore store() {
		return this.store;
	}

}
