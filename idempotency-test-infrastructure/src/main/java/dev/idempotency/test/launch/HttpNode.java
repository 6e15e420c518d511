package dev.idempotency.test.launch;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;

import dev.idempotency.test.http.RawHttp;
import org.jspecify.annotations.Nullable;

/**
 * One node of an HTTP application in a JVM of its own ({@link ChildJvm}, the test's class
 * path), on a port it keeps across restarts, so that a chaos run can kill it with SIGKILL
 * and start it again behind the same proxy; its output is appended to one log.
 */
public final class HttpNode implements AutoCloseable {

	private final String name;

	private final int port;

	private final String readyPath;

	private final Path log;

	private final ChildJvm.Spec spec;

	private volatile @Nullable ChildJvm jvm;

	/**
	 * A node of {@code mainClass} named {@code name}, started with {@code arguments}
	 * (after {@code --server.port}); it is ready when {@code GET readyPath} answers
	 * {@code 200}.
	 */
	public HttpNode(Class<?> mainClass, String name, String readyPath, List<String> arguments, Path log) {
		this.name = name;
		this.port = ChildJvm.freePort();
		this.readyPath = readyPath;
		this.log = log;
		this.spec = ChildJvm.of(mainClass)
			.name(name)
			.jvmOptions("-Xmx384m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")
			.arguments("--server.port=" + this.port)
			.arguments(arguments)
			.appendLog(log);
	}

	public String name() {
		return this.name;
	}

	public int port() {
		return this.port;
	}

	/**
	 * The lines of the node's log, over all its starts, that contain {@code text}, each
	 * after the node's name.
	 */
	public List<String> logLines(String text) {
		if (!Files.exists(this.log)) {
			return List.of();
		}
		try (Stream<String> lines = Files.lines(this.log, StandardCharsets.ISO_8859_1)) {
			return lines.filter((line) -> line.contains(text)).map((line) -> this.name + ": " + line).toList();
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * Starts the JVM and waits until {@code GET readyPath} answers {@code 200}; a node
	 * that does not answer within 90 s is killed.
	 */
	public void start() {
		ChildJvm started = this.spec.start();
		this.jvm = started;
		try {
			started.await("answer to GET " + this.readyPath,
					() -> RawHttp.exchange(this.port, "GET", this.readyPath, null, null).status() == 200,
					Duration.ofSeconds(90));
		}
		catch (IllegalStateException ex) {
			started.close();
			throw ex;
		}
	}

	/**
	 * Starts a killed node again, as an orchestrator would: a start that fails (the
	 * application exits, for instance because its database is cut off) is tried again, up
	 * to 20 times.
	 */
	public void restart() {
		for (int attempt = 1;; attempt++) {
			try {
				start();
				return;
			}
			catch (IllegalStateException ex) {
				if (attempt == 20) {
					throw ex;
				}
			}
		}
	}

	/**
	 * SIGKILL: no shutdown hook, no graceful stop, in-flight requests die with the
	 * process.
	 */
	public void kill() {
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
