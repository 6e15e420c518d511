package dev.idempotency.core.internal;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import dev.idempotency.core.ExecutionResult;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Keeps the leases of running operations alive (lease mode): one thread sweeps over the
 * running reservations four times per heartbeat interval, instead of a task scheduled and
 * cancelled per request.
 */
final class Heartbeat {

	/** Logs as the engine, whose logger name users already configure. */
	private static final Log logger = LogFactory.getLog(IdempotencyEngine.class);

	private final IdempotencyEngine engine;

	private final EngineReporter reporter;

	private final long intervalNanos;

	private final long sweepNanos;

	/**
	 * The thread while it runs; null before {@link #start()} and after {@link #stop()}.
	 */
	private @Nullable ScheduledExecutorService executor;

	private boolean stopped;

	private final Object lifecycleMonitor = new Object();

	/** Reservations whose operation is running. */
	private final Set<Reservation.Lease> running = ConcurrentHashMap.newKeySet();

	Heartbeat(IdempotencyEngine engine, EngineReporter reporter) {
		this.engine = engine;
		this.reporter = reporter;
		this.intervalNanos = engine.settings().lease().heartbeatInterval().toNanos();
		this.sweepNanos = Math.max(TimeUnit.MILLISECONDS.toNanos(1), this.intervalNanos / 4);
	}

	/** See {@link IdempotencyEngine#start()}. */
	void start() {
		synchronized (this.lifecycleMonitor) {
			if (this.executor != null) {
				return;
			}
			ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor((runnable) -> {
				Thread thread = new Thread(runnable, "idempotency-heartbeat");
				thread.setDaemon(true);
				return thread;
			});
			executor.scheduleWithFixedDelay(this::sweep, this.sweepNanos, this.sweepNanos, TimeUnit.NANOSECONDS);
			this.executor = executor;
			this.stopped = false;
		}
	}

	/**
	 * See {@link IdempotencyEngine#stop()}: ends the thread, then releases the leases of
	 * runs still going, which no heartbeat would keep alive any more.
	 */
	void stop() {
		ScheduledExecutorService executor;
		synchronized (this.lifecycleMonitor) {
			executor = this.executor;
			this.executor = null;
			this.stopped = true;
		}
		if (executor != null) {
			executor.shutdownNow();
			try {
				executor.awaitTermination(5, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
		for (Reservation.Lease reservation : this.running) {
			this.engine.releaseAtStop(reservation);
		}
	}

	boolean isRunning() {
		synchronized (this.lifecycleMonitor) {
			return this.executor != null;
		}
	}

	/** Starts the thread if nothing did yet; false if it was stopped. */
	boolean ensureRunning() {
		synchronized (this.lifecycleMonitor) {
			if (this.executor != null) {
				return true;
			}
			if (this.stopped) {
				return false;
			}
		}
		start();
		return true;
	}

	/** Beats this reservation's lease until it is finished. */
	void keepAlive(Reservation.Lease reservation) {
		this.running.add(reservation);
	}

	/** Stops beating a finished reservation at once rather than at the next sweep. */
	void forget(Reservation reservation) {
		this.running.remove(reservation);
	}

	/**
	 * Beats every owner whose last beat started at least 3/4 of an interval ago, so two
	 * beats of an owner start at most one interval apart (plus the duration of one
	 * sweep); the settings keep that within half the lease.
	 */
	private void sweep() {
		long due = System.nanoTime() - (this.intervalNanos - this.sweepNanos);
		for (Reservation.Lease reservation : this.running) {
			if (reservation.finished()) {
				this.running.remove(reservation);
			}
			else if (reservation.lastBeatNanos() - due <= 0) {
				beat(reservation);
			}
		}
	}

	private void beat(Reservation.Lease reservation) {
		// The lease runs from when the store executes the call, which is after this
		// instant.
		long start = System.nanoTime();
		try {
			if (this.reporter.timed("heartbeat", () -> this.engine.store()
				.heartbeat(reservation.id(), reservation.ownerToken(), this.engine.settings().lease().duration()))) {
				reservation.beaten(start);
			}
			else if (this.engine.finish(reservation)) {
				// Not merely finished meanwhile: another request took the record over.
				logger.warn("Lost ownership of " + reservation + " while it runs; another request took it over");
				this.reporter.finished(ExecutionResult.OWNERSHIP_LOST, reservation);
			}
		}
		catch (RuntimeException ex) {
			// Keep beating at the next sweep: the store may come back before the lease
			// runs out.
			logger.warn("Heartbeat of " + reservation + " failed: " + ex);
		}
	}

}
