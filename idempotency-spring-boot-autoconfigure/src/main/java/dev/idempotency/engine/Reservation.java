package dev.idempotency.engine;

import java.util.concurrent.ScheduledFuture;
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

	private volatile ScheduledFuture<?> heartbeat;

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

	void heartbeat(ScheduledFuture<?> heartbeat) {
		this.heartbeat = heartbeat;
	}

	/** Marks the reservation finished and stops its heartbeat; false if it already was. */
	boolean finish() {
		if (!this.finished.compareAndSet(false, true)) {
			return false;
		}
		ScheduledFuture<?> beat = this.heartbeat;
		if (beat != null) {
			beat.cancel(false);
		}
		return true;
	}

	@Override
	public String toString() {
		return "Reservation[" + this.operation + ", key=" + this.id.key() + "]";
	}

}
