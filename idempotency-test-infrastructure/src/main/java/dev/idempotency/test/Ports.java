package dev.idempotency.test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Ports for what the tests start and may start again on the same port (a child JVM killed
 * and restarted, a proxy that listens again after a cut, a Redis node restarted), picked
 * at random from ranges below the kernel's ephemeral ports (32768 and up on Linux). A
 * port the kernel hands out can be taken, the moment it is free, as the local port of any
 * outgoing connection on the machine: CI saw a proxy fail to listen again on 45173 while
 * a parallel module ran. Below that range only an explicit bind takes a port, and the
 * ranges keep each kind apart:
 * <ul>
 * <li>Redis Cluster nodes 10000-14000, their bus ports (+10000) 20000-24000;</li>
 * <li>proxies 14000-17000;</li>
 * <li>child JVMs 17000-20000;</li>
 * <li>standalone Redis servers and sentinels 26000-32000.</li>
 * </ul>
 */
public enum Ports {

	/** Redis Cluster nodes; each needs its bus port, port + 10000, free too. */
	CLUSTER_NODE(10000, 14000, true),

	/** {@link dev.idempotency.test.servers.TcpProxy} listeners. */
	PROXY(14000, 17000, false),

	/** Applications started in child JVMs. */
	CHILD_JVM(17000, 20000, false),

	/** Standalone Redis servers and sentinels. */
	REDIS(26000, 32000, false);

	private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

	private final int from;

	private final int to;

	private final boolean withBusPort;

	Ports(int from, int to, boolean withBusPort) {
		this.from = from;
		this.to = to;
		this.withBusPort = withBusPort;
	}

	/** A port of this range free on the loopback address now. */
	public int free() {
		for (int attempt = 0; attempt < 100; attempt++) {
			int port = ThreadLocalRandom.current().nextInt(this.from, this.to);
			if (isFree(port) && (!this.withBusPort || isFree(port + 10000))) {
				return port;
			}
		}
		throw new IllegalStateException("no free port in [" + this.from + ", " + this.to + ") for " + this);
	}

	/**
	 * Listens on the loopback address on a port of this range, picked at random: no
	 * window between a probe and the bind.
	 */
	public ServerSocket listen() throws IOException {
		IOException last = null;
		for (int attempt = 0; attempt < 100; attempt++) {
			try {
				return listen(ThreadLocalRandom.current().nextInt(this.from, this.to));
			}
			catch (IOException ex) {
				last = ex;
			}
		}
		throw new IOException("no free port in [" + this.from + ", " + this.to + ") for " + this, last);
	}

	/** Listens on the loopback address on {@code port}, with the address reusable. */
	public static ServerSocket listen(int port) throws IOException {
		ServerSocket server = new ServerSocket();
		server.setReuseAddress(true);
		server.bind(new InetSocketAddress(LOOPBACK, port));
		return server;
	}

	private static boolean isFree(int port) {
		try (ServerSocket socket = listen(port)) {
			return true;
		}
		catch (IOException ex) {
			return false;
		}
	}

}
