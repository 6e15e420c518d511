package dev.idempotency.core.internal;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

import dev.idempotency.store.RecordId;
import io.micrometer.observation.Observation;
import org.jspecify.annotations.Nullable;

/**
 * One run of an operation under its key, finished exactly once: a {@link Lease} in lease
 * mode, a {@link RecordAfterSuccess} in record-after-success mode.
 *
 * @since 0.1.0
 */
public abstract sealed class Reservation permits Reservation.Lease, Reservation.RecordAfterSuccess {

	private final RecordId id;

	private final String operation;

	private final AtomicBoolean finished = new AtomicBoolean();

	private final @Nullable Observation observation;

	private Reservation(RecordId id, String operation, @Nullable Observation observation) {
		this.id = id;
		this.operation = operation;
		this.observation = observation;
	}

	public RecordId id() {
		return this.id;
	}

	public String operation() {
		return this.operation;
	}

	/**
	 * Whether this reservation took over a record whose previous owner's lease had
	 * expired; never in record-after-success mode.
	 */
	public boolean takenOver() {
		return false;
	}

	/**
	 * The call's observation, stopped when the run is reported finished; none: not
	 * observed.
	 */
	@Nullable Observation observation() {
		return this.observation;
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

	/**
	 * Lease mode: the run owns the record while the operation runs. The owner token
	 * fences every write, and the heartbeat keeps the lease alive.
	 */
	public static final class Lease extends Reservation {

		private final String ownerToken;

		private final boolean takenOver;

		private volatile long lastBeatNanos;

		Lease(RecordId id, String ownerToken, String operation, boolean takenOver, long reservedNanos,
				@Nullable Observation observation) {
			super(id, operation, observation);
			this.ownerToken = ownerToken;
			this.takenOver = takenOver;
			this.lastBeatNanos = reservedNanos;
		}

		/** The owner token that fences the writes. */
		public String ownerToken() {
			return this.ownerToken;
		}

		@Override
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

	}

	/**
	 * Record-after-success mode: nothing is in the store while the operation runs. It
	 * carries what is needed to record the final response once it succeeded.
	 */
	public static final class RecordAfterSuccess extends Reservation {

		private final String fingerprint;

		private final Duration retention;

		RecordAfterSuccess(RecordId id, String operation, String fingerprint, Duration retention,
				@Nullable Observation observation) {
			super(id, operation, observation);
			this.fingerprint = fingerprint;
			this.retention = retention;
		}

		/** The request's fingerprint, recorded with the response. */
		String fingerprint() {
			return this.fingerprint;
		}

		/** How long the recorded response is kept. */
		Duration retention() {
			return this.retention;
		}

	}

}
