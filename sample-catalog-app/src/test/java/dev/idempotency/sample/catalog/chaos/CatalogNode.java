package dev.idempotency.sample.catalog.chaos;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import dev.idempotency.sample.catalog.SampleCatalogApplication;
import dev.idempotency.test.http.RawHttp;
import dev.idempotency.test.launch.ChildJvm;

/**
 * One node of the sample catalog in a JVM of its own ({@link ChildJvm}, the test's class
 * path), so that it can be killed with SIGKILL and started again on the same port, its
 * output appended to one log.
 */
final class CatalogNode implements AutoCloseable {

	private final String name;

	private final int port;

	private final ChildJvm.Spec spec;

	private volatile ChildJvm jvm;

	CatalogNode(String name, List<String> arguments, Path log) {
		this.name = name;
		this.port = ChildJvm.freePort();
		this.spec = ChildJvm.of(SampleCatalogApplication.class)
			.name(name)
			.jvmOptions("-Xmx384m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")
			.arguments("--server.port=" + this.port)
			.arguments(arguments)
			.appendLog(log);
	}

	String name() {
		return this.name;
	}

	int port() {
		return this.port;
	}

	/**
	 * Starts the JVM and waits until the catalog answers {@code GET /v1/config}; a node
	 * that does not answer within 90 s is killed.
	 */
	void start() {
		ChildJvm started = this.spec.start();
		this.jvm = started;
		try {
			started.await("answer to GET /v1/config",
					() -> RawHttp.exchange(this.port, "GET", "/v1/config", null, null).status() == 200,
					Duration.ofSeconds(90));
		}
		catch (IllegalStateException ex) {
			started.close();
			throw ex;
		}
	}

	/**
	 * SIGKILL: no shutdown hook, no graceful stop, in-flight requests die with the
	 * process.
	 */
	void kill() {
		ChildJvm running = this.jvm;
		if (running != null && running.isAlive()) {
			running.kill();
		}
	}

	@Override
	public void close() {
		kill();
	}

}
