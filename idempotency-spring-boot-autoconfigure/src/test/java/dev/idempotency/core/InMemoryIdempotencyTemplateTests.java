package dev.idempotency.core;

import java.time.Clock;

import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.memory.InMemoryIdempotencyStore;

/** {@link IdempotencyTemplateTests} on the in-memory store. */
class InMemoryIdempotencyTemplateTests extends IdempotencyTemplateTests {

	private final InMemoryIdempotencyStore store = new InMemoryIdempotencyStore(Clock.systemUTC(), 1000);

	@Override
	protected IdempotencyStore store() {
		return this.store;
	}

}
