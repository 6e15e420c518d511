package dev.idempotency.resilience;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * {@link ResilienceTestApplication} in a JVM of its own, so that it can be killed with
 * SIGKILL (no shutdown hook, no release, no last heartbeat) or stopped with SIGTERM. Its
 * output goes to a log file under {@code target/}.
 */
final class ChildNode implements AutoCloseable {

	private final Process process;

	private final URI base;

	private final Path log;

	private ChildNode(Process process, int port, Path log) {
		this.process = process;
		this.base = URI.create("http://127.0.0.1:" + port);
		this.log = log;
	}

	static ChildNode start(String name, Map<String, String> properties) throws IOException {
		int port;
		try (ServerSocket probe = new ServerSocket(0)) {
			port = probe.getLocalPort();
		}
		Path log = Path.of("target", "resilience-" + name + ".log").toAbsolutePath();
		Files.createDirectories(log.getParent());
		List<String> command = new ArrayList<>();
		command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
		// A small, quickly started JVM: it only has to hold one request.
		command.addAll(List.of("-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto"));
		command.add("-cp");
		command.add(System.getProperty("java.class.path"));
		command.add(ResilienceTestApplication.class.getName());
		command.addAll(Settings.arguments(properties));
		command.add("--server.port=" + port);
		command.add("--test.node-name=" + name);
		Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
		return new ChildNode(process, port, log);
	}

	URI uri(String pathAndQuery) {
		return this.base.resolve(pathAndQuery);
	}

	/** Waits until the node answers HTTP, failing early (with its log) if it exits. */
	void awaitReady(Duration timeout) throws InterruptedException {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (System.nanoTime() < deadline) {
			if (!this.process.isAlive()) {
				throw new IllegalStateException(
						"the child node exited with " + this.process.exitValue() + ":\n" + logTail());
			}
			try {
				if (Http.get(uri("/ping")).statusCode() == 200) {
					return;
				}
			}
			catch (IllegalStateException ex) {
				// not listening yet
			}
			Thread.sleep(100);
		}
		throw new IllegalStateException("the child node did not answer within " + timeout + ":\n" + logTail());
	}

	/** SIGKILL, then waits until the process is gone. */
	int kill() throws InterruptedException {
		this.process.destroyForcibly();
		if (!this.process.waitFor(10, TimeUnit.SECONDS)) {
			throw new IllegalStateException("the child node survived SIGKILL");
		}
		return this.process.exitValue();
	}

	/**
	 * SIGTERM, as an orchestrator stops a node, then waits until the process is gone: its
	 * shutdown hook closes the application (the web server's graceful shutdown first).
	 */
	int terminate(Duration timeout) throws InterruptedException {
		this.process.destroy();
		if (!this.process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
			throw new IllegalStateException(
					"the child node did not exit within " + timeout + " of SIGTERM:\n" + logTail());
		}
		return this.process.exitValue();
	}

	boolean isAlive() {
		return this.process.isAlive();
	}

	long pid() {
		return this.process.pid();
	}

	String logTail() {
		try {
			List<String> lines = Files.readAllLines(this.log);
			return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	@Override
	public void close() throws InterruptedException {
		if (this.process.isAlive()) {
			kill();
		}
	}

}
