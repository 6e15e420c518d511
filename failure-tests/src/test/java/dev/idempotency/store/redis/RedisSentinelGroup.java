package dev.idempotency.store.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * A real Redis primary with one replica, watched by three Sentinels (quorum 2), started
 * from Java with the {@code redis-server} binary on the {@code PATH}, each process in its
 * own temporary directory, on ports picked at run time. {@link #close} (or a JVM shutdown
 * hook) kills them all. Sentinels declare the primary down after one second without an
 * answer.
 */
public final class RedisSentinelGroup implements AutoCloseable {

	/** The name the Sentinels monitor the primary under. */
	public static final String MASTER_NAME = "idem";

	private static final Duration READY_TIMEOUT = RedisProcesses.READY_TIMEOUT;

	private final Path directory;

	private final List<Server> servers = new ArrayList<>();

	private final List<Server> sentinels = new ArrayList<>();

	private final Thread shutdownHook = new Thread(this::stopAll, "redis-sentinel-shutdown");

	private RedisSentinelGroup(Path directory) {
		this.directory = directory;
		Runtime.getRuntime().addShutdownHook(this.shutdownHook);
	}

	/**
	 * Starts the primary, its replica and three Sentinels; waits until the Sentinels see
	 * both.
	 */
	public static RedisSentinelGroup start() {
		RedisSentinelGroup group;
		try {
			group = new RedisSentinelGroup(Files.createTempDirectory("idem-redis-sentinel-"));
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		try {
			Server primary = group.startServer(freePort(), null);
			group.servers.add(primary);
			group.awaitPing(primary);
			Server replica = group.startServer(freePort(), primary.port);
			group.servers.add(replica);
			group.awaitPing(replica);
			for (int i = 0; i < 3; i++) {
				Server sentinel = group.startSentinel(freePort(), primary.port);
				group.sentinels.add(sentinel);
				group.awaitPing(sentinel);
			}
			group.awaitReady(primary.port);
			return group;
		}
		catch (RuntimeException ex) {
			group.close();
			throw ex;
		}
	}

	/** The port of the primary, as the first live Sentinel says. */
	public int primary() {
		for (Server sentinel : this.sentinels) {
			if (sentinel.process.isAlive()) {
				List<String> address = RedisCluster
					.cli(sentinel.port, "SENTINEL", "get-master-addr-by-name", MASTER_NAME)
					.lines()
					.toList();
				if (address.size() == 2) {
					return Integer.parseInt(address.get(1).strip());
				}
			}
		}
		throw new IllegalStateException("no Sentinel answers");
	}

	/** Kills the server on {@code port} with SIGKILL. */
	public void kill(int port) {
		Server server = server(port);
		server.process.destroyForcibly();
		try {
			server.process.waitFor(10, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/**
	 * Starts the killed server on {@code port} again, as a replica of the current
	 * primary.
	 */
	public void restartAsReplica(int port) {
		Server old = server(port);
		Server restarted = startServer(port, primary());
		this.servers.set(this.servers.indexOf(old), restarted);
		awaitPing(restarted);
	}

	/**
	 * A Lettuce connection factory that finds the primary through the three Sentinels.
	 */
	public LettuceConnectionFactory connectionFactory(Duration commandTimeout) {
		RedisSentinelConfiguration configuration = new RedisSentinelConfiguration().master(MASTER_NAME);
		this.sentinels.forEach((sentinel) -> configuration.sentinel("127.0.0.1", sentinel.port));
		LettuceConnectionFactory factory = new LettuceConnectionFactory(configuration,
				LettuceClientConfiguration.builder().commandTimeout(commandTimeout).build());
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	@Override
	public void close() {
		stopAll();
		try {
			Runtime.getRuntime().removeShutdownHook(this.shutdownHook);
		}
		catch (IllegalStateException ex) {
			// the JVM is shutting down: the hook runs anyway
		}
	}

	private void stopAll() {
		List<Process> all = new ArrayList<>();
		this.sentinels.forEach((sentinel) -> all.add(sentinel.process));
		this.servers.forEach((server) -> all.add(server.process));
		RedisProcesses.stopAll(all, this.directory);
	}

	private Server server(int port) {
		return this.servers.stream()
			.filter((server) -> server.port == port)
			.findFirst()
			.orElseThrow(() -> new IllegalArgumentException("no server on port " + port));
	}

	private Server startServer(int port, Integer primaryPort) {
		Path dir = this.directory.resolve(Integer.toString(port));
		List<String> command = new ArrayList<>(List.of("redis-server", "--port", Integer.toString(port), "--bind",
				"127.0.0.1", "--dir", dir.toString(), "--save", "", "--appendonly", "no", "--repl-diskless-sync-delay",
				"0", "--daemonize", "no", "--logfile", dir.resolve("redis.log").toString()));
		if (primaryPort != null) {
			command.addAll(List.of("--replicaof", "127.0.0.1", Integer.toString(primaryPort)));
		}
		return start(port, dir, command);
	}

	private Server startSentinel(int port, int primaryPort) {
		Path dir = this.directory.resolve("sentinel-" + port);
		try {
			Files.createDirectories(dir);
			// Sentinel rewrites its configuration file: it must be its own and writable
			Path config = dir.resolve("sentinel.conf");
			Files.writeString(config,
					String.join("\n", "port " + port, "bind 127.0.0.1", "dir " + dir,
							"logfile " + dir.resolve("sentinel.log"),
							"sentinel monitor " + MASTER_NAME + " 127.0.0.1 " + primaryPort + " 2",
							"sentinel down-after-milliseconds " + MASTER_NAME + " 1000",
							"sentinel failover-timeout " + MASTER_NAME + " 10000",
							"sentinel parallel-syncs " + MASTER_NAME + " 1", ""));
			return start(port, dir, List.of("redis-server", config.toString(), "--sentinel"));
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static Server start(int port, Path dir, List<String> command) {
		return new Server(port, RedisProcesses.start(dir, command));
	}

	private void awaitReady(int primaryPort) {
		long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
		while (System.nanoTime() < deadline) {
			boolean ready = RedisCluster.cli(this.servers.get(1).port, "INFO", "replication")
				.contains("master_link_status:up");
			for (Server sentinel : this.sentinels) {
				String master = RedisCluster.cli(sentinel.port, "SENTINEL", "master", MASTER_NAME);
				// every Sentinel knows the replica and the two other Sentinels
				ready &= master.contains("num-slaves\n1") && master.contains("num-other-sentinels\n2");
			}
			if (ready) {
				return;
			}
			RedisProcesses.sleep(100);
		}
		throw new IllegalStateException("the Sentinels do not see the primary, its replica and each other");
	}

	private void awaitPing(Server server) {
		RedisProcesses.awaitPong(server.port, server.process, this.directory);
	}

	private static int freePort() {
		for (int attempt = 0; attempt < 20; attempt++) {
			int port = ThreadLocalRandom.current().nextInt(30000, 40000);
			if (RedisProcesses.free(port)) {
				return port;
			}
		}
		throw new IllegalStateException("no free port");
	}

	private record Server(int port, Process process) {
	}

}
