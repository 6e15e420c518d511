package dev.idempotency.autoconfigure.internal;

import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import dev.idempotency.store.IdempotencyStore;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.context.SmartLifecycle;

/**
 * Deletes expired records on a fixed delay, on a single daemon thread of its own (the
 * application's scheduling is left alone). A run deletes batches until one comes back
 * short, so a backlog is cleared in one run without one long-running DELETE. Every node
 * may run it: each batch is one statement that only deletes rows already expired by the
 * database's clock. The JDBC and the R2DBC stores' (the R2DBC store's purge waits for its
 * statements on this thread, never on an event loop). Not final: the class-based proxy of
 * an application's aspect on lifecycle beans subclasses it.
 */
public class IdempotencyPurgeScheduler implements SmartLifecycle {

	private static final Log logger = LogFactory.getLog(IdempotencyPurgeScheduler.class);

	private final IdempotencyStore store;

	private final Duration interval;

	private final int batchSize;

	private @Nullable ScheduledExecutorService executor;

	public IdempotencyPurgeScheduler(IdempotencyStore store, Duration interval, int batchSize) {
		if (interval.isNegative() || interval.isZero()) {
			throw new IllegalArgumentException("Purge interval must be positive");
		}
		if (batchSize < 1) {
			throw new IllegalArgumentException("Purge batch size must be at least 1");
		}
		this.store = store;
		this.interval = interval;
		this.batchSize = batchSize;
	}

	/**
	 * Runs one purge: batches until one deletes fewer than the batch size.
	 * @return how many records were deleted
	 */
	public int purge() {
		int total = 0;
		int deleted;
		do {
			deleted = this.store.purgeExpired(this.batchSize);
			total += deleted;
		}
		while (deleted >= this.batchSize);
		return total;
	}

	private void runQuietly() {
		try {
			int deleted = purge();
			if (deleted > 0 && logger.isDebugEnabled()) {
				logger.debug("Purged " + deleted + " expired idempotency records");
			}
		}
		catch (RuntimeException ex) {
			// The next run tries again; a failed purge only delays the removal of dead
			// rows.
			logger.warn("Purging expired idempotency records failed", ex);
		}
	}

	@Override
	public synchronized void start() {
		if (this.executor != null) {
			return;
		}
		ScheduledExecutorService executor = Executors.newSingleThreadScheduledExecutor((task) -> {
			Thread thread = new Thread(task, "idempotency-purge");
			thread.setDaemon(true);
			return thread;
		});
		long delay = this.interval.toMillis();
		executor.scheduleWithFixedDelay(this::runQuietly, delay, delay, TimeUnit.MILLISECONDS);
		this.executor = executor;
	}

	@Override
	public synchronized void stop() {
		if (this.executor != null) {
			this.executor.shutdownNow();
			this.executor = null;
		}
	}

	@Override
	public synchronized boolean isRunning() {
		return this.executor != null;
	}

}
