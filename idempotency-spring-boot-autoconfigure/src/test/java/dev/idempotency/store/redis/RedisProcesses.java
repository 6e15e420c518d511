package dev.idempotency.store.redis;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Starting and stopping the {@code redis-server} processes of the test set-ups
 * ({@link RedisCluster}, {@code RedisSentinelGroup} of the failure tests): each in its
 * own directory, its output in {@code stdout.log} there.
 */
final class RedisProcesses {

	static final Duration READY_TIMEOUT = Duration.ofSeconds(60);

	private RedisProcesses() {
	}

	/** Starts {@code command} (a {@code redis-server} invocation) in {@code dir}. */
	static Process start(Path dir, List<String> command) {
		try {
			Files.createDirectories(dir);
			return new ProcessBuilder(command).redirectErrorStream(true)
				.redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("stdout.log").toFile()))
				.start();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("cannot start redis-server (is it on the PATH?)", ex);
		}
	}

	/** Waits until the server on {@code port} answers PING. */
	static void awaitPong(int port, Process process, Path dir) {
		long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
		while (System.nanoTime() < deadline) {
			if (!process.isAlive()) {
				throw new IllegalStateException("redis-server on " + port + " exited; see " + dir);
			}
			if (RedisCluster.cli(port, "PING").strip().equals("PONG")) {
				return;
			}
			sleep(50);
		}
		throw new IllegalStateException("redis-server on " + port + " does not answer; see " + dir);
	}

	/**
	 * Kills every process (SIGKILL), waits for them, and deletes their common directory.
	 */
	static void stopAll(Collection<Process> processes, Path directory) {
		processes.forEach(Process::destroyForcibly);
		for (Process process : processes) {
			try {
				process.waitFor(10, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
		try (Stream<Path> files = Files.walk(directory)) {
			files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
		}
		catch (IOException ex) {
			// a temporary directory left behind
		}
	}

	/** Whether nothing listens on {@code port} of the loopback address. */
	static boolean free(int port) {
		try (ServerSocket socket = new ServerSocket()) {
			socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
			return true;
		}
		catch (IOException ex) {
			return false;
		}
	}

	static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

}
