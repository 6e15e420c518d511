package dev.idempotency.test.servers;

/**
 * Stops a group of servers on {@link #close()}, or when the JVM exits first (a test JVM
 * killed by a timeout, a run interrupted): a shutdown hook registered at construction and
 * removed by {@code close()}.
 */
final class StopOnExit implements AutoCloseable {

	private final Runnable stop;

	private final Thread hook;

	StopOnExit(Runnable stop, String name) {
		this.stop = stop;
		this.hook = new Thread(stop, name);
		Runtime.getRuntime().addShutdownHook(this.hook);
	}

	@Override
	public void close() {
		this.stop.run();
		try {
			Runtime.getRuntime().removeShutdownHook(this.hook);
		}
		catch (IllegalStateException ex) {
			// the JVM is shutting down: the hook runs anyway
		}
	}

}
