package dev.idempotency.engine;

import java.util.concurrent.atomic.AtomicBoolean;

import dev.idempotency.store.RecordId;

/**
 * Ownership of one record while its operation runs: the record, the owner token that
 * fences every write, and the heartbeat that keeps the lease alive. Finished exactly
 * once.
 */
public final class Reservation {

	private final RecordId id;

	private final String ownerToken;

	private final String operation;

	private final boolean takenOver;

	private final AtomicBoolean finished = new AtomicBoolean();

	private volatile long lastBeatNanos;

	Reservation(RecordId id, String ownerToken, String operation, boolean takenOver, long reservedNanos) {
		this.id = id;
		this.ownerToken = ownerToken;
		this.operation = operation;
		this.takenOver = takenOver;
		this.lastBeatNanos = reservedNanos;
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

	/**
	 * Whether this reservation took over a record whose previous owner's lease had
	 * expired.
	 */
	public boolean takenOver() {
		return this.takenOver;
	}

	/**
	 * When the call that last extended the lease (or reserved the record) started, by
	 * {@link System#nanoTime()}: the lease runs from no earlier than this.
	 */
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
