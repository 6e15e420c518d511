package dev.idempotency.test.servers;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import dev.idempotency.test.Ports;

/**
 * One {@code redis-server} process of a test, started with the binary on the {@code PATH}
 * (Redis 7): every Redis process the tests start goes through this class (a server of a
 * test's own with {@link #standalone}, the nodes of {@link RedisCluster}, the servers and
 * Sentinels of {@link RedisSentinelGroup}). Each runs in a directory of its own, its
 * output in {@code stdout.log} there, its log in {@code redis.log}.
 * <p>
 * For a fresh server of a test's own (an empty script cache, a server to kill):
 * <pre class="code">
 * try (RedisServer redis = RedisServer.standalone()) {
 *     // 127.0.0.1:redis.port()
 * }
 * </pre> {@link #close} kills it (SIGKILL) and deletes its directory. The shared server
 * of the machine (127.0.0.1:6379) is {@link SharedRedis}.
 */
public final class RedisServer implements AutoCloseable {

	/** How long a server has to answer {@code PING} after it was started. */
	public static final Duration READY_TIMEOUT = Duration.ofSeconds(60);

	private final int port;

	private final Path dir;

	private final Process process;

	private final boolean ownDirectory;

	private RedisServer(int port, Path dir, Process process, boolean ownDirectory) {
		this.port = port;
		this.dir = dir;
		this.process = process;
		this.ownDirectory = ownDirectory;
	}

	/**
	 * A standalone server on a free port, without persistence, in a temporary directory
	 * of its own, answering {@code PING}. {@link #close} kills it and deletes the
	 * directory.
	 * @param arguments further {@code redis-server} arguments
	 */
	public static RedisServer standalone(String... arguments) {
		Path dir;
		try {
			dir = Files.createTempDirectory("idem-redis-");
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		int port = Ports.REDIS.free();
		List<String> command = new ArrayList<>(arguments(port, dir));
		command.addAll(List.of(arguments));
		RedisServer server = new RedisServer(port, dir, launch(dir, command), true);
		try {
			return server.awaitPong();
		}
		catch (RuntimeException ex) {
			server.close();
			throw ex;
		}
	}

	/**
	 * Starts {@code redis-server} with {@code arguments} (which set {@code port}) in
	 * {@code dir}, without waiting for it ({@link #awaitPong}). {@link #close} kills it
	 * and leaves the directory: it belongs to the caller, which may start the server
	 * again from it.
	 */
	public static RedisServer start(int port, Path dir, List<String> arguments) {
		return new RedisServer(port, dir, launch(dir, arguments), false);
	}

	/**
	 * The arguments of a server on {@code port} of the loopback address, in {@code dir},
	 * without persistence ({@code save ""}, {@code appendonly no}), syncing replicas at
	 * once, not daemonized, logging to {@code redis.log}: add {@code --cluster-enabled},
	 * {@code --replicaof} and so on.
	 */
	public static List<String> arguments(int port, Path dir) {
		return List.of("--port", Integer.toString(port), "--bind", "127.0.0.1", "--dir", dir.toString(), "--save", "",
				"--appendonly", "no", "--repl-diskless-sync-delay", "0", "--daemonize", "no", "--logfile",
				dir.resolve("redis.log").toString());
	}

	private static Process launch(Path dir, List<String> arguments) {
		List<String> command = new ArrayList<>();
		command.add("redis-server");
		command.addAll(arguments);
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

	public int port() {
		return this.port;
	}

	public Path dir() {
		return this.dir;
	}

	public boolean isAlive() {
		return this.process.isAlive();
	}

	/**
	 * Waits until the server answers {@code PING}, failing at once if it exits.
	 * @return this server
	 */
	public RedisServer awaitPong() {
		long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
		while (System.nanoTime() < deadline) {
			if (!this.process.isAlive()) {
				throw new IllegalStateException("redis-server on " + this.port + " exited; see " + this.dir);
			}
			if (cli(this.port, "PING").strip().equals("PONG")) {
				return this;
			}
			sleep(50);
		}
		throw new IllegalStateException("redis-server on " + this.port + " does not answer; see " + this.dir);
	}

	/** Stops the process (SIGSTOP): it keeps its connections but answers nothing. */
	public void pause() {
		run(List.of("kill", "-STOP", Long.toString(this.process.pid())));
	}

	/** Lets a paused process run again (SIGCONT). */
	public void resume() {
		run(List.of("kill", "-CONT", Long.toString(this.process.pid())));
	}

	/** Kills the process with SIGKILL, as a crash would, and waits until it is gone. */
	public void kill() {
		this.process.destroyForcibly();
		try {
			this.process.waitFor(10, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/**
	 * Kills the server; deletes its directory if {@link #standalone} created it.
	 */
	@Override
	public void close() {
		kill();
		if (this.ownDirectory) {
			delete(this.dir);
		}
	}

	/**
	 * Kills every server (SIGKILL), waits for them, and deletes their common directory.
	 */
	public static void stopAll(Collection<RedisServer> servers, Path directory) {
		servers.forEach((server) -> server.process.destroyForcibly());
		servers.forEach(RedisServer::kill);
		delete(directory);
	}

	/** Runs {@code redis-cli -h 127.0.0.1 -p port command...} and returns its output. */
	public static String cli(int port, String... command) {
		List<String> arguments = new ArrayList<>(List.of("redis-cli", "-h", "127.0.0.1", "-p", Integer.toString(port)));
		arguments.addAll(List.of(command));
		return run(arguments);
	}

	/**
	 * Runs a command (for instance {@code redis-cli --cluster create}) and returns its
	 * output.
	 */
	static String run(List<String> command) {
		try {
			Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
			String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
			process.waitFor(30, TimeUnit.SECONDS);
			return output;
		}
		catch (IOException ex) {
			throw new UncheckedIOException("cannot run " + command, ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private static void delete(Path directory) {
		try (Stream<Path> files = Files.walk(directory)) {
			files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
		}
		catch (IOException ex) {
			// a temporary directory left behind
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
