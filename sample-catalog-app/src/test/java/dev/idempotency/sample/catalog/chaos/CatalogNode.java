package dev.idempotency.sample.catalog.chaos;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import dev.idempotency.sample.catalog.SampleCatalogApplication;

/**
 * One node of the sample catalog in a JVM of its own (the test's class path), so that it
 * can be killed with SIGKILL and started again on the same port.
 */
final class CatalogNode implements AutoCloseable {

	private final String name;

	private final int port;

	private final List<String> arguments;

	private final Path log;

	private volatile Process process;

	CatalogNode(String name, List<String> arguments, Path log) throws IOException {
		this.name = name;
		try (ServerSocket probe = new ServerSocket(0)) {
			this.port = probe.getLocalPort();
		}
		this.arguments = arguments;
		this.log = log;
	}

	String name() {
		return this.name;
	}

	int port() {
		return this.port;
	}

	/** Starts the JVM and waits until the catalog answers {@code GET /v1/config}. */
	void start() throws IOException, InterruptedException {
		List<String> command = new ArrayList<>();
		command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
		command.add("-Xmx384m");
		command.add("-XX:TieredStopAtLevel=1");
		command.add("-cp");
		command.add(System.getProperty("java.class.path"));
		command.add(SampleCatalogApplication.class.getName());
		command.add("--server.port=" + this.port);
		command.addAll(this.arguments);
		this.process = new ProcessBuilder(command).redirectErrorStream(true)
			.redirectOutput(ProcessBuilder.Redirect.appendTo(this.log.toFile()))
			.start();
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
		while (System.nanoTime() < deadline) {
			if (!this.process.isAlive()) {
				throw new IllegalStateException(
						this.name + " exited with " + this.process.exitValue() + "; see " + this.log);
			}
			try {
				if (RawHttp.exchange(this.port, "GET", "/v1/config", null, null).status() == 200) {
					return;
				}
			}
			catch (IOException ex) {
				// not listening yet
			}
			Thread.sleep(200);
		}
		throw new IllegalStateException(this.name + " did not answer within 90 s; see " + this.log);
	}

	/**
	 * SIGKILL: no shutdown hook, no graceful stop, in-flight requests die with the
	 * process.
	 */
	void kill() throws InterruptedException {
		Process running = this.process;
		if (running != null) {
			running.destroyForcibly();
			running.waitFor();
		}
	}

	@Override
	public void close() throws InterruptedException {
		kill();
	}

}
