package dev.idempotency.test.servers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;

import dev.idempotency.test.Ports;

import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * A real Redis Cluster on this machine for tests: {@code masters} primaries with one
 * replica each, started from Java ({@link RedisServer}, and {@code redis-cli} for
 * {@code --cluster create}) with the binaries on the {@code PATH} (Redis 7), so that
 * {@code ./mvnw verify} needs nothing started by hand.
 * <p>
 * Each node runs in its own temporary directory (no persistence: {@code save ""},
 * {@code appendonly no}), on a port picked at run time whose cluster bus port (port +
 * 10000) is free too. {@link #start} waits until every node reports
 * {@code cluster_state:ok} and sees every slot covered; {@link #close} kills every
 * process and deletes the directories, and a JVM shutdown hook does the same if a test
 * run is cut short ({@link #shared} relies on that hook). The same steps as a script, for
 * a shell: {@code .ci/redis-cluster/cluster.sh}.
 */
public final class RedisCluster implements AutoCloseable {

	private static final Duration READY_TIMEOUT = RedisServer.READY_TIMEOUT;

	private static @Nullable RedisCluster shared;

	private final List<RedisServer> nodes = new ArrayList<>();

	private final Path directory;

	private final StopOnExit stopOnExit = new StopOnExit(this::stopAll, "redis-cluster-shutdown");

	private RedisCluster(Path directory) {
		this.directory = directory;
	}

	/**
	 * Starts {@code masters} primaries and as many replicas, and waits until the cluster
	 * is ok.
	 */
	public static RedisCluster start(int masters) {
		// Ports are picked at random and checked free, but another process can take one
		// (or its bus port, in the ephemeral range) before the server binds it, more so
		// with test JVMs running side by side: a node that exits at start-up costs one
		// more try on other ports, not the test run.
		for (int attempt = 1;; attempt++) {
			try {
				return startOnce(masters);
			}
			catch (IllegalStateException ex) {
				if (attempt == 3 || !String.valueOf(ex.getMessage()).contains("exited")) {
					throw ex;
				}
			}
		}
	}

	private static RedisCluster startOnce(int masters) {
		RedisCluster cluster;
		try {
			cluster = new RedisCluster(Files.createTempDirectory("idem-redis-cluster-"));
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		try {
			for (int i = 0; i < masters * 2; i++) {
				cluster.nodes.add(cluster.startNode());
			}
			for (RedisServer node : cluster.nodes) {
				node.awaitPong();
			}
			List<String> create = new ArrayList<>(List.of("redis-cli", "--cluster", "create"));
			cluster.nodes.forEach((node) -> create.add("127.0.0.1:" + node.port()));
			create.addAll(List.of("--cluster-replicas", "1", "--cluster-yes"));
			String output = RedisServer.run(create);
			if (!output.contains("[OK] All 16384 slots covered")) {
				throw new IllegalStateException("redis-cli --cluster create failed:\n" + output);
			}
			cluster.awaitOk();
			cluster.awaitEveryPrimaryKnowsItsReplica();
			return cluster;
		}
		catch (RuntimeException ex) {
			cluster.close();
			throw ex;
		}
	}

	/**
	 * The cluster of three primaries and three replicas that the test classes of this JVM
	 * share, started on first use and stopped when the JVM exits: starting one takes
	 * seconds, and the classes that only read and write records need no cluster of their
	 * own. A class that uses it keeps its records under a key prefix of its own, leaves
	 * every node running (it may pause one and resume it) and never closes it; a class
	 * that kills nodes starts a cluster of its own with {@link #start}. Each call waits
	 * until the cluster is ok again.
	 */
	public static synchronized RedisCluster shared() {
		RedisCluster cluster = shared;
		if (cluster == null || !cluster.allAlive()) {
			if (cluster != null) {
				cluster.close();
			}
			cluster = start(3);
			shared = cluster;
		}
		cluster.awaitOk();
		return cluster;
	}

	private boolean allAlive() {
		return this.nodes.stream().allMatch((node) -> node.isAlive());
	}

	/** The ports of every node, primaries and replicas. */
	public List<Integer> ports() {
		return this.nodes.stream().map(RedisServer::port).toList();
	}

	/**
	 * The port of the primary serving {@code slot}, as the first live node says (a
	 * primary that failed keeps the slot until a replica has been promoted).
	 */
	public int masterOfSlot(int slot) {
		for (RedisServer node : this.nodes) {
			if (!node.isAlive()) {
				continue;
			}
			for (String line : cli(node.port(), "CLUSTER", "NODES").lines().toList()) {
				String[] fields = line.split(" ");
				// a failed primary keeps its slots in the table until a replica takes
				// them over
				if (fields.length < 9 || !fields[2].contains("master")) {
					continue;
				}
				for (int i = 8; i < fields.length; i++) {
					String[] range = fields[i].split("-");
					if (range[0].startsWith("[")) {
						continue;
					}
					int from = Integer.parseInt(range[0]);
					int to = (range.length > 1) ? Integer.parseInt(range[1]) : from;
					if (slot >= from && slot <= to) {
						String address = fields[1].substring(0, fields[1].indexOf('@'));
						return Integer.parseInt(address.substring(address.lastIndexOf(':') + 1));
					}
				}
			}
		}
		throw new IllegalStateException("no live node knows the master of slot " + slot);
	}

	/** The slots the primary on {@code port} serves, as it says itself. */
	public BitSet slotsOf(int port) {
		BitSet slots = new BitSet(16384);
		for (String line : cli(port, "CLUSTER", "NODES").lines().toList()) {
			String[] fields = line.split(" ");
			if (fields.length < 9 || !fields[2].contains("myself")) {
				continue;
			}
			for (int i = 8; i < fields.length; i++) {
				String[] range = fields[i].split("-");
				if (!range[0].startsWith("[")) {
					int from = Integer.parseInt(range[0]);
					slots.set(from, ((range.length > 1) ? Integer.parseInt(range[1]) : from) + 1);
				}
			}
		}
		return slots;
	}

	/** The ports of the live primaries. */
	public List<Integer> masters() {
		List<Integer> masters = new ArrayList<>();
		for (RedisServer node : this.nodes) {
			if (node.isAlive() && cli(node.port(), "ROLE").startsWith("master")) {
				masters.add(node.port());
			}
		}
		return masters;
	}

	/**
	 * The port of a replica of the primary on {@code primaryPort}, as that primary says.
	 */
	public int replicaOf(int primaryPort) {
		String myself = null;
		List<String> lines = cli(primaryPort, "CLUSTER", "NODES").lines().toList();
		for (String line : lines) {
			String[] fields = line.split(" ");
			if (fields.length > 2 && fields[2].contains("myself")) {
				myself = fields[0];
			}
		}
		for (String line : lines) {
			String[] fields = line.split(" ");
			if (fields.length > 3 && fields[2].contains("slave") && fields[3].equals(myself)
					&& !fields[2].contains("fail")) {
				String address = fields[1].substring(0, fields[1].indexOf('@'));
				return Integer.parseInt(address.substring(address.lastIndexOf(':') + 1));
			}
		}
		throw new IllegalStateException("no live replica of " + primaryPort);
	}

	/**
	 * Stops the node on {@code port} (SIGSTOP): it keeps its connections but answers
	 * nothing.
	 */
	public void pause(int port) {
		node(port).pause();
	}

	/** Lets a paused node run again (SIGCONT). */
	public void resume(int port) {
		node(port).resume();
	}

	/** Kills the node on {@code port} with SIGKILL, as a crash would. */
	public void kill(int port) {
		node(port).kill();
	}

	/** Runs a command on every live node (for instance {@code SCRIPT FLUSH}). */
	public void onEveryNode(String... command) {
		for (RedisServer node : this.nodes) {
			if (node.isAlive()) {
				cli(node.port(), command);
			}
		}
	}

	private static String cli(int port, String... command) {
		return RedisServer.cli(port, command);
	}

	/**
	 * A Lettuce connection factory for the cluster, with topology refresh on (periodic
	 * and adaptive).
	 */
	public LettuceConnectionFactory connectionFactory(Duration commandTimeout) {
		RedisClusterConfiguration configuration = new RedisClusterConfiguration();
		this.nodes.forEach((node) -> configuration.clusterNode("127.0.0.1", node.port()));
		ClusterTopologyRefreshOptions refresh = ClusterTopologyRefreshOptions.builder()
			.enablePeriodicRefresh(Duration.ofSeconds(1))
			.enableAllAdaptiveRefreshTriggers()
			.build();
		LettuceClientConfiguration client = LettuceClientConfiguration.builder()
			.commandTimeout(commandTimeout)
			.clientOptions(ClusterClientOptions.builder().topologyRefreshOptions(refresh).build())
			.build();
		LettuceConnectionFactory factory = new LettuceConnectionFactory(configuration, client);
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	/**
	 * Waits until every live node says {@code cluster_state:ok} and knows a primary for
	 * every slot, and every live replica has finished its sync with its primary
	 * ({@code master_link_status:up}): before that a replica can neither acknowledge
	 * writes nor be promoted.
	 */
	public void awaitOk() {
		long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
		String last = "";
		while (System.nanoTime() < deadline) {
			boolean ok = true;
			for (RedisServer node : this.nodes) {
				if (node.isAlive()) {
					last = cli(node.port(), "CLUSTER", "INFO");
					ok &= last.contains("cluster_state:ok") && last.contains("cluster_slots_ok:16384");
					String replication = cli(node.port(), "INFO", "replication");
					ok &= !replication.contains("role:slave") || replication.contains("master_link_status:up");
				}
			}
			if (ok) {
				return;
			}
			RedisServer.sleep(100);
		}
		throw new IllegalStateException("the cluster is not ok after " + READY_TIMEOUT + ":\n" + last);
	}

	/**
	 * A replica's link can be up before its primary has heard of it by gossip: until then
	 * {@link #replicaOf} finds no replica.
	 */
	private void awaitEveryPrimaryKnowsItsReplica() {
		long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
		while (true) {
			try {
				masters().forEach(this::replicaOf);
				return;
			}
			catch (IllegalStateException ex) {
				if (System.nanoTime() > deadline) {
					throw ex;
				}
				RedisServer.sleep(100);
			}
		}
	}

	@Override
	public void close() {
		this.stopOnExit.close();
	}

	private void stopAll() {
		RedisServer.stopAll(this.nodes, this.directory);
	}

	private RedisServer node(int port) {
		return this.nodes.stream()
			.filter((node) -> node.port() == port)
			.findFirst()
			.orElseThrow(() -> new IllegalArgumentException("no node on port " + port));
	}

	/**
	 * Starts the killed node on {@code port} again, from its directory: with its
	 * {@code nodes.conf} it rejoins the cluster (as a replica, once another node has been
	 * promoted in its place); its data comes back from its primary, not from disk.
	 */
	public void restart(int port) {
		RedisServer old = node(port);
		if (old.isAlive()) {
			throw new IllegalStateException("the node on " + port + " is running");
		}
		RedisServer restarted = startNode(port, old.dir());
		this.nodes.set(this.nodes.indexOf(old), restarted);
		restarted.awaitPong();
	}

	private RedisServer startNode() {
		int port = Ports.CLUSTER_NODE.free();
		return startNode(port, this.directory.resolve(Integer.toString(port)));
	}

	private static RedisServer startNode(int port, Path dir) {
		List<String> arguments = new ArrayList<>(RedisServer.arguments(port, dir));
		arguments.addAll(List.of("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
				"--cluster-node-timeout", "2000"));
		return RedisServer.start(port, dir, arguments);
	}

}
