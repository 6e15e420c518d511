package dev.idempotency.test.servers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.idempotency.test.Ports;

import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * A real Redis primary with one replica, watched by three Sentinels (quorum 2), started
 * from Java ({@link RedisServer}) with the {@code redis-server} binary on the
 * {@code PATH}, each process in its own temporary directory, on ports picked at run time.
 * {@link #close} (or a JVM shutdown hook) kills them all. Sentinels declare the primary
 * down after one second without an answer.
 */
public final class RedisSentinelGroup implements AutoCloseable {

	/** The name the Sentinels monitor the primary under. */
	public static final String MASTER_NAME = "idem";

	private static final Duration READY_TIMEOUT = RedisServer.READY_TIMEOUT;

	private final Path directory;

	private final List<RedisServer> servers = new ArrayList<>();

	private final List<RedisServer> sentinels = new ArrayList<>();

	private final StopOnExit stopOnExit = new StopOnExit(this::stopAll, "redis-sentinel-shutdown");

	private RedisSentinelGroup(Path directory) {
		this.directory = directory;
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
			RedisServer primary = group.startServer(freePort(), null);
			group.servers.add(primary);
			primary.awaitPong();
			RedisServer replica = group.startServer(freePort(), primary.port());
			group.servers.add(replica);
			replica.awaitPong();
			for (int i = 0; i < 3; i++) {
				RedisServer sentinel = group.startSentinel(freePort(), primary.port());
				group.sentinels.add(sentinel);
				sentinel.awaitPong();
			}
			group.awaitReady();
			return group;
		}
		catch (RuntimeException ex) {
			group.close();
			throw ex;
		}
	}

	/** The port of the primary, as the first live Sentinel says. */
	public int primary() {
		for (RedisServer sentinel : this.sentinels) {
			if (sentinel.isAlive()) {
				List<String> address = RedisServer
					.cli(sentinel.port(), "SENTINEL", "get-master-addr-by-name", MASTER_NAME)
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
		server(port).kill();
	}

	/**
	 * Starts the killed server on {@code port} again, as a replica of the current
	 * primary.
	 */
	public void restartAsReplica(int port) {
		RedisServer old = server(port);
		RedisServer restarted = startServer(port, primary());
		this.servers.set(this.servers.indexOf(old), restarted);
		restarted.awaitPong();
	}

	/**
	 * A Lettuce connection factory that finds the primary through the three Sentinels.
	 */
	public LettuceConnectionFactory connectionFactory(Duration commandTimeout) {
		RedisSentinelConfiguration configuration = new RedisSentinelConfiguration().master(MASTER_NAME);
		this.sentinels.forEach((sentinel) -> configuration.sentinel("127.0.0.1", sentinel.port()));
		LettuceConnectionFactory factory = new LettuceConnectionFactory(configuration,
				LettuceClientConfiguration.builder().commandTimeout(commandTimeout).build());
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	@Override
	public void close() {
		this.stopOnExit.close();
	}

	private void stopAll() {
		List<RedisServer> all = new ArrayList<>(this.sentinels);
		all.addAll(this.servers);
		RedisServer.stopAll(all, this.directory);
	}

	private RedisServer server(int port) {
		return this.servers.stream()
			.filter((server) -> server.port() == port)
			.findFirst()
			.orElseThrow(() -> new IllegalArgumentException("no server on port " + port));
	}

	private RedisServer startServer(int port, @Nullable Integer primaryPort) {
		Path dir = this.directory.resolve(Integer.toString(port));
		List<String> arguments = new ArrayList<>(RedisServer.arguments(port, dir));
		if (primaryPort != null) {
			arguments.addAll(List.of("--replicaof", "127.0.0.1", Integer.toString(primaryPort)));
		}
		return RedisServer.start(port, dir, arguments);
	}

	private RedisServer startSentinel(int port, int primaryPort) {
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
			return RedisServer.start(port, dir, List.of(config.toString(), "--sentinel"));
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private void awaitReady() {
		long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
		while (System.nanoTime() < deadline) {
			boolean ready = RedisServer.cli(this.servers.get(1).port(), "INFO", "replication")
				.contains("master_link_status:up");
			for (RedisServer sentinel : this.sentinels) {
				String master = RedisServer.cli(sentinel.port(), "SENTINEL", "master", MASTER_NAME);
				// every Sentinel knows the replica and the two other Sentinels
				ready &= master.contains("num-slaves\n1") && master.contains("num-other-sentinels\n2");
			}
			if (ready) {
				return;
			}
			RedisServer.sleep(100);
		}
		throw new IllegalStateException("the Sentinels do not see the primary, its replica and each other");
	}

	private static int freePort() {
		return Ports.REDIS.free();
	}

}
