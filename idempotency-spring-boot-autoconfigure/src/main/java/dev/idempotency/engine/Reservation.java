package dev.idempotency.engine;

import java.util.concurrent.atomic.AtomicBoolean;

import dev.idempotency.store.RecordId;

/**
 * Ownership of one record while its operation runs: the record, the owner token that fences every
 * write, and the heartbeat that keeps the lease alive. Finished exactly once.
 */
public final class Reservation {

	private final RecordId id;

	private final String ownerToken;

	private final String operation;

	private final boolean takenOver;

	private final AtomicBoolean finished = new AtomicBoolean();

	private volatile long lastBeatNanos = System.nanoTime();

	Reservation(RecordId id, String ownerToken, String operation, boolean takenOver) {
		this.id = id;
		this.ownerToken = ownerToken;
		this.operation = operation;
		this.takenOver = takenOver;
	}

	public RecordId id() {
		return this.id;
	}

	public String ownerToken() {
		return this.ownerToken;
	}

	public String operation() {
		return this.operation;
	}

	/** Whether this reservation took over a record whose previous owner's lease had expired. */
	public boolean takenOver() {
		return this.takenOver;
	}

	/** When the lease was last extended (or the record reserved), by {@link System#nanoTime()}. */
	long lastBeatNanos() {
		return this.lastBeatNanos;
	}

	void beaten(long nanos) {
		this.lastBeatNanos = nanos;
	}

	boolean finished() {
		return this.finished.get();
	}

	/** Marks the reservation finished; false if it already was. */
	boolean finish() {
		return this.finished.compareAndSet(false, true);
	}

	@Override
	public String toString() {
		return "Reservation[" + this.operation + ", key=" + this.id.key() + "]";
	}

}
