package dev.idempotency.sample.catalog.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import org.jspecify.annotations.Nullable;

/**
 * Adds up, over the store calls made on request threads (Tomcat's {@code http-nio-…}; not
 * the purge scheduler or the heartbeat sweep), the calling thread's CPU time and the wall
 * time inside the call: what a protected request spends in its store client, apart from
 * the rest of the request. Optionally waits (parked, no CPU) before each call: the
 * "memory-wait" control.
 */
final class StoreCallMeter {

	/** The store's own call, which may throw anything. */
	interface Call {

		Object proceed() throws Throwable;

	}

	private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();

	private final AtomicLong cpuNanos = new AtomicLong();

	private final AtomicLong wallNanos = new AtomicLong();

	private final AtomicLong calls = new AtomicLong();

	Object measure(Call call, long waitNanos) throws Throwable {
		return measure(call, waitNanos, null);
	}

	/**
	 * Measures {@code call}, after waiting {@code waitNanos} and running {@code before}
	 * (a control's extra work, measured with the call), when given.
	 */
	Object measure(Call call, long waitNanos, @Nullable Call before) throws Throwable {
		if (!Thread.currentThread().getName().startsWith("http-")) {
			return call.proceed();
		}
		long cpu = this.threads.getCurrentThreadCpuTime();
		long wall = System.nanoTime();
		try {
			if (waitNanos > 0) {
				LockSupport.parkNanos(waitNanos);
			}
			if (before != null) {
				before.proceed();
			}
			return call.proceed();
		}
		finally {
			this.wallNanos.addAndGet(System.nanoTime() - wall);
			this.cpuNanos.addAndGet(this.threads.getCurrentThreadCpuTime() - cpu);
			this.calls.incrementAndGet();
		}
	}

	/** CPU nanoseconds, wall nanoseconds and calls so far. */
	long[] snapshot() {
		return new long[] { this.cpuNanos.get(), this.wallNanos.get(), this.calls.get() };
	}

}
