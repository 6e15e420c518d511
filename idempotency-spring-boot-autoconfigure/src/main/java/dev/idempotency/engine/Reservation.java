package dev.idempotency.engine;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.idempotency.store.RecordId;
import org.jspecify.annotations.Nullable;

/**
 * One run of an operation under its key, finished exactly once. In lease mode it owns the
 * record while the operation runs: the owner token fences every write, and the heartbeat
 * keeps the lease alive. In record-after-success mode nothing is in the store while the
 * operation runs: it carries what is needed to record the final response afterwards
 * (fingerprint and retention), and has no owner token.
 */
public final class Reservation {

	private final RecordId id;

	private final @Nullable String ownerToken;

	private final String operation;

	private final boolean takenOver;

	private final @Nullable String fingerprint;

	private final @Nullable Duration retention;

	private final AtomicBoolean finished = new AtomicBoolean();

	private volatile long lastBeatNanos;

	Reservation(RecordId id, String ownerToken, String operation, boolean takenOver, long reservedNanos) {
		this(id, ownerToken, operation, takenOver, reservedNanos, null, null);
	}

	private Reservation(RecordId id, @Nullable String ownerToken, String operation, boolean takenOver,
			long reservedNanos, @Nullable String fingerprint, @Nullable Duration retention) {
		this.id = id;
		this.ownerToken = ownerToken;
		this.operation = operation;
		this.takenOver = takenOver;
		this.lastBeatNanos = reservedNanos;
		this.fingerprint = fingerprint;
		this.retention = retention;
	}

	/**
	 * A run in record-after-success mode: nothing was written; its final response is
	 * recorded with this fingerprint and retention once it succeeded.
	 */
	static Reservation recordAfterSuccess(RecordId id, String operation, String fingerprint, Duration retention) {
		return new Reservation(id, null, operation, false, System.nanoTime(), fingerprint, retention);
	}

	public RecordId id() {
		return this.id;
	}

	/**
	 * The owner token that fences the writes; {@code null} in record-after-success mode.
	 */
	public @Nullable String ownerToken() {
		return this.ownerToken;
	}

	/**
	 * The owner token, for the store calls of a reservation that holds its record.
	 * @throws IllegalStateException in record-after-success mode, which holds none
	 */
	String requiredOwnerToken() {
		if (this.ownerToken == null) {
			throw new IllegalStateException(this + " holds no record (record-after-success mode)");
		}
		return this.ownerToken;
	}

	/**
	 * Whether this run holds no record and records its final response after it succeeded
	 * (record-after-success mode).
	 */
	public boolean recordsAfterSuccess() {
		return this.ownerToken == null;
	}

	/**
	 * The request's fingerprint, kept for recording (record-after-success mode).
	 * @throws IllegalStateException in lease mode, which keeps none
	 */
	String fingerprint() {
		if (this.fingerprint == null) {
			throw new IllegalStateException(this + " keeps no fingerprint (lease mode)");
		}
		return this.fingerprint;
	}

	/**
	 * How long the recorded response is kept (record-after-success mode).
	 * @throws IllegalStateException in lease mode, which keeps none
	 */
	Duration retention() {
		if (this.retention == null) {
			throw new IllegalStateException(this + " keeps no retention (lease mode)");
		}
		return this.retention;
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
