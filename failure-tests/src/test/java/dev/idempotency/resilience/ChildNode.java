package dev.idempotency.resilience;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import dev.idempotency.test.launch.ChildJvm;

/**
 * {@link ResilienceTestApplication} in a JVM of its own ({@link ChildJvm}), so that it
 * can be killed with SIGKILL (no shutdown hook, no release, no last heartbeat) or stopped
 * with SIGTERM. Its output goes to a log file under {@code target/}.
 */
final class ChildNode implements AutoCloseable {

	private final ChildJvm jvm;

	private final URI base;

	private ChildNode(ChildJvm jvm, int port) {
		this.jvm = jvm;
		this.base = URI.create("http://127.0.0.1:" + port);
	}

	static ChildNode start(String name, Map<String, String> properties) {
		int port = ChildJvm.freePort();
		ChildJvm jvm = ChildJvm.of(ResilienceTestApplication.class)
			.name("child node " + name)
			// A small, quickly started JVM: it only has to hold one request.
			.jvmOptions("-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto")
			.arguments(Settings.arguments(properties))
			.arguments("--server.port=" + port, "--test.node-name=" + name)
			.log(Path.of("target", "resilience-" + name + ".log"))
			.start();
		return new ChildNode(jvm, port);
	}

	URI uri(String pathAndQuery) {
		return this.base.resolve(pathAndQuery);
	}

	/** Waits until the node answers HTTP, failing early (with its log) if it exits. */
	void awaitReady(Duration timeout) {
		this.jvm.await("answer to GET /ping", () -> Http.get(uri("/ping")).statusCode() == 200, timeout);
	}

	/** SIGKILL, then waits until the process is gone. */
	int kill() {
		return this.jvm.kill();
	}

	/**
	 * SIGTERM, as an orchestrator stops a node, then waits until the process is gone: its
	 * shutdown hook closes the application (the web server's graceful shutdown first).
	 */
	int terminate(Duration timeout) {
		return this.jvm.terminate(timeout);
	}

	boolean isAlive() {
		return this.jvm.isAlive();
	}

	long pid() {
		return this.jvm.pid();
	}

	String logTail() {
		return this.jvm.logTail(40);
	}

	@Override
	public void close() {
		this.jvm.close();
	}

}
