package dev.idempotency.store.memory;

import java.time.Instant;

/**
 * When a record expires; the ticket makes it unique and ties break by age. Carries when
 * the record was made (a take-over keeps it), for
 * {@link InMemoryIdempotencyStore#oldestRecordAge()} and
 * {@link InMemoryIdempotencyStore#inspect}.
 */
record Expiry(Instant at, long ticket, Instant created) implements Comparable<Expiry> {

	@Override
	public int compareTo(Expiry other) {
		int byTime = this.at.compareTo(other.at);
		return (byTime != 0) ? byTime : Long.compare(this.ticket, other.ticket);
	}

}
