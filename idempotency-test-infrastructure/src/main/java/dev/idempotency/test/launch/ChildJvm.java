package dev.idempotency.test.launch;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import dev.idempotency.test.Ports;

/**
 * A Java main class in a JVM of its own, started by a test so that it can be killed with
 * SIGKILL (no shutdown hook, no last heartbeat), stopped with SIGTERM, or started again:
 * every child node of the tests (a resilience node, a catalog node of the chaos run)
 * starts through this class. By default the child has the test JVM's own class path, and
 * its output (standard output and error) goes to a log file, which the failures of
 * {@link #await} quote. <pre class="code">
 * int port = ChildJvm.freePort();
 * try (ChildJvm node = ChildJvm.of(MyApplication.class)
 *     .jvmOptions("-Xmx256m")
 *     .arguments("--server.port=" + port)
 *     .log(Path.of("target", "my-node.log"))
 *     .start()) {
 *     node.awaitPort(port, Duration.ofSeconds(60));
 *     // ... node.kill(): SIGKILL; node.terminate(timeout): SIGTERM
 * }
 * </pre>
 */
public final class ChildJvm implements AutoCloseable {

	private final String name;

	private final Process process;

	private final Path log;

	private ChildJvm(String name, Process process, Path log) {
		this.name = name;
		this.process = process;
		this.log = log;
	}

	/** A child JVM that runs {@code mainClass}'s {@code main}. */
	public static Spec of(Class<?> mainClass) {
		return new Spec(mainClass.getName());
	}

	/** A port free on this machine now, for a child to listen on. */
	public static int freePort() {
		return Ports.CHILD_JVM.free();
	}

	/** The log file of the child's output. */
	public Path log() {
		return this.log;
	}

	public boolean isAlive() {
		return this.process.isAlive();
	}

	public long pid() {
		return this.process.pid();
	}

	/**
	 * Waits until {@code probe} says the child is ready, failing early (with the end of
	 * its log) if it exits, or after {@code timeout}. An exception of the probe counts as
	 * not ready yet.
	 */
	public void await(String what, Probe probe, Duration timeout) {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (System.nanoTime() < deadline) {
			if (!this.process.isAlive()) {
				throw new IllegalStateException(this.name + " exited with " + this.process.exitValue() + " before "
						+ what + "; its log " + this.log + " ends with:\n" + logTail(40));
			}
			try {
				if (probe.ready()) {
					return;
				}
			}
			catch (Exception ex) {
				// not ready yet
			}
			sleep(100);
		}
		throw new IllegalStateException(this.name + ": no " + what + " within " + timeout + "; its log " + this.log
				+ " ends with:\n" + logTail(40));
	}

	/**
	 * Waits until something accepts connections on {@code port} of the loopback address.
	 */
	public void awaitPort(int port, Duration timeout) {
		await("listener on port " + port, () -> {
			try (Socket socket = new Socket()) {
				socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1000);
				return true;
			}
		}, timeout);
	}

	/** Waits until a line of the log contains {@code text}. */
	public void awaitLine(String text, Duration timeout) {
		await("log line with \"" + text + "\"",
				() -> Files.readAllLines(this.log).stream().anyMatch((line) -> line.contains(text)), timeout);
	}

	/** SIGKILL, then waits until the process is gone. */
	public int kill() {
		this.process.destroyForcibly();
		if (!waitFor(Duration.ofSeconds(10))) {
			throw new IllegalStateException(this.name + " survived SIGKILL");
		}
		return this.process.exitValue();
	}

	/**
	 * SIGTERM, as an orchestrator stops a node, then waits until the process is gone: its
	 * shutdown hooks run (a Spring application closes, its web server's graceful shutdown
	 * first).
	 */
	public int terminate(Duration timeout) {
		this.process.destroy();
		if (!waitFor(timeout)) {
			throw new IllegalStateException(
					this.name + " did not exit within " + timeout + " of SIGTERM:\n" + logTail(40));
		}
		return this.process.exitValue();
	}

	private boolean waitFor(Duration timeout) {
		try {
			return this.process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/** The last {@code lines} lines of the child's log. */
	public String logTail(int lines) {
		try {
			List<String> all = Files.readAllLines(this.log);
			return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
		}
		catch (IOException ex) {
			return "(cannot read " + this.log + ": " + ex + ")";
		}
	}

	/** Kills the child (SIGKILL) if it still runs. */
	@Override
	public void close() {
		if (this.process.isAlive()) {
			kill();
		}
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/** Whether a child is ready; an exception means not yet. */
	@FunctionalInterface
	public interface Probe {

		boolean ready() throws Exception;

	}

	/**
	 * What to start: the main class, JVM options, system properties, arguments, class
	 * path and log file. A spec can start several JVMs one after another (a node killed
	 * and started again).
	 */
	public static final class Spec {

		private final String mainClass;

		private String name;

		private final List<String> jvmOptions = new ArrayList<>();

		private final Map<String, String> systemProperties = new LinkedHashMap<>();

		private final List<String> arguments = new ArrayList<>();

		private String classPath = System.getProperty("java.class.path");

		private Path log;

		private boolean appendLog;

		private Spec(String mainClass) {
			this.mainClass = mainClass;
			this.name = mainClass.substring(mainClass.lastIndexOf('.') + 1);
			this.log = Path.of("target", "child-jvm", this.name + ".log");
		}

		/** The child's name in failure messages (the main class's simple name). */
		public Spec name(String name) {
			this.name = name;
			return this;
		}

		/** Options of the JVM ({@code -Xmx256m}), before the main class. */
		public Spec jvmOptions(String... options) {
			this.jvmOptions.addAll(List.of(options));
			return this;
		}

		/** A {@code -Dname=value} option. */
		public Spec systemProperty(String name, String value) {
			this.systemProperties.put(name, value);
			return this;
		}

		/** Arguments of the main class, after those given before. */
		public Spec arguments(String... arguments) {
			return arguments(List.of(arguments));
		}

		/** Arguments of the main class, after those given before. */
		public Spec arguments(List<String> arguments) {
			this.arguments.addAll(arguments);
			return this;
		}

		/** The class path (by default, the test JVM's {@code java.class.path}). */
		public Spec classPath(String classPath) {
			this.classPath = classPath;
			return this;
		}

		/**
		 * The file the child's output goes to (by default
		 * {@code target/child-jvm/<name>.log}), replaced at each start.
		 */
		public Spec log(Path log) {
			this.log = log;
			this.appendLog = false;
			return this;
		}

		/** The same, appended to at each start (a node started again keeps one log). */
		public Spec appendLog(Path log) {
			this.log = log;
			this.appendLog = true;
			return this;
		}

		/** Starts a JVM of this spec, with the {@code java} of the running JVM. */
		public ChildJvm start() {
			List<String> command = new ArrayList<>();
			command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
			command.addAll(this.jvmOptions);
			this.systemProperties.forEach((key, value) -> command.add("-D" + key + "=" + value));
			command.add("-cp");
			command.add(this.classPath);
			command.add(this.mainClass);
			command.addAll(this.arguments);
			Path file = this.log.toAbsolutePath();
			try {
				Files.createDirectories(file.getParent());
				ProcessBuilder.Redirect output = this.appendLog ? ProcessBuilder.Redirect.appendTo(file.toFile())
						: ProcessBuilder.Redirect.to(file.toFile());
				Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output).start();
				return new ChildJvm(this.name, process, file);
			}
			catch (IOException ex) {
				throw new UncheckedIOException("cannot start " + this.name, ex);
			}
		}

	}

}
