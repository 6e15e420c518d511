package dev.idempotency.resilience;

import java.time.Duration;
import java.util.Map;

/**
 * One real store server for the resilience tests: how the nodes reach it, and the
 * clean-up of what this run wrote there (its own key prefix or schema, nothing else: the
 * servers are shared).
 */
interface StoreFixture extends AutoCloseable {

	/** The port the real server listens on, at 127.0.0.1. */
	int port();

	/**
	 * Properties that point a node at this store through 127.0.0.1:{@code port} (the
	 * server's own port, or a proxy in front of it), with client connect and command
	 * timeouts of {@code timeout}: a second in the outage tests, so that a cut connection
	 * fails a request fast.
	 */
	Map<String, String> properties(int port, Duration timeout);

	/** The real server, with timeouts generous enough for a loaded CI machine. */
	default Map<String, String> properties() {
		return properties(port(), Duration.ofSeconds(5));
	}

	/** Removes what this run wrote, and only that. */
	@Override
	void close();

}
