package dev.idempotency.test.servers;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP proxy on 127.0.0.1 that puts faults on connections, as a network or a load
 * balancer does. Per connection it either relays, or <em>loses the response</em> (the
 * request reaches the server, which runs it; the client's connection is reset when the
 * answer would come), or <em>cuts the response</em> (a random first part of the answer
 * reaches the client, then the connection is reset). {@link #cut(long)} resets every
 * connection and refuses new ones for a while: a store (or network) outage.
 */
public final class FaultyTcpProxy implements AutoCloseable {

	private enum Fault {

		NONE, LOSE_RESPONSE, CUT_RESPONSE

	}

	private final int upstreamPort;

	private final double loseRate;

	private final double cutRate;

	private final Random random;

	private final ServerSocket server;

	private final ExecutorService threads = Executors.newCachedThreadPool(runnable -> {
		Thread thread = new Thread(runnable, "chaos-proxy");
		thread.setDaemon(true);
		return thread;
	});

	private final Set<Socket> open = ConcurrentHashMap.newKeySet();

	private volatile long refuseUntilNanos = System.nanoTime();

	private final AtomicLong lostResponses = new AtomicLong();

	private final AtomicLong cutResponses = new AtomicLong();

	private final AtomicLong refusedConnections = new AtomicLong();

	/**
	 * A proxy to {@code upstreamPort} that loses a share {@code loseRate} of the
	 * responses and cuts a share {@code cutRate} mid-way (0 and 0: faults only by
	 * {@link #cut(long)}), drawn from {@code seed}.
	 */
	public FaultyTcpProxy(int upstreamPort, double loseRate, double cutRate, long seed) throws IOException {
		this.upstreamPort = upstreamPort;
		this.loseRate = loseRate;
		this.cutRate = cutRate;
		this.random = new Random(seed);
		this.server = new ServerSocket(0, 200, InetAddress.getLoopbackAddress());
		this.threads.execute(this::acceptLoop);
	}

	public int port() {
		return this.server.getLocalPort();
	}

	/** Responses swallowed so far (the request ran, the client got a reset). */
	public long lostResponses() {
		return this.lostResponses.get();
	}

	/** Responses cut mid-way so far. */
	public long cutResponses() {
		return this.cutResponses.get();
	}

	/** Connections refused during cuts so far. */
	public long refusedConnections() {
		return this.refusedConnections.get();
	}

	/** Resets every open connection and refuses new ones for the given time. */
	public void cut(long millis) {
		this.refuseUntilNanos = System.nanoTime() + millis * 1_000_000;
		this.open.forEach(FaultyTcpProxy::reset);
	}

	@Override
	public void close() throws IOException {
		this.server.close();
		this.open.forEach(FaultyTcpProxy::reset);
		this.threads.shutdownNow();
	}

	private void acceptLoop() {
		while (!this.server.isClosed()) {
			Socket client;
			try {
				client = this.server.accept();
			}
			catch (IOException ex) {
				return;
			}
			if (System.nanoTime() - this.refuseUntilNanos < 0) {
				this.refusedConnections.incrementAndGet();
				reset(client);
				continue;
			}
			this.threads.execute(() -> relay(client, nextFault()));
		}
	}

	private Fault nextFault() {
		synchronized (this.random) {
			double draw = this.random.nextDouble();
			if (draw < this.loseRate) {
				return Fault.LOSE_RESPONSE;
			}
			return (draw < this.loseRate + this.cutRate) ? Fault.CUT_RESPONSE : Fault.NONE;
		}
	}

	private int nextCutPoint() {
		synchronized (this.random) {
			return 1 + this.random.nextInt(400);
		}
	}

	private void relay(Socket client, Fault fault) {
		Socket upstream = new Socket();
		this.open.add(client);
		this.open.add(upstream);
		try {
			upstream.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), this.upstreamPort), 2000);
			this.threads.execute(() -> pump(client, upstream, Long.MAX_VALUE, false));
			switch (fault) {
				case NONE -> pump(upstream, client, Long.MAX_VALUE, false);
				case LOSE_RESPONSE -> {
					// The server ran the request; its whole answer is swallowed, then the
					// client is reset.
					upstream.getInputStream().transferTo(OutputStream.nullOutputStream());
					this.lostResponses.incrementAndGet();
				}
				case CUT_RESPONSE -> {
					if (pump(upstream, client, nextCutPoint(), true)) {
						this.cutResponses.incrementAndGet();
					}
				}
			}
		}
		catch (IOException ex) {
			// the other side went away: reset both below
		}
		finally {
			reset(client);
			reset(upstream);
			this.open.remove(client);
			this.open.remove(upstream);
		}
	}

	/**
	 * Copies from one socket to the other, at most {@code limit} bytes; true if the limit
	 * stopped it.
	 */
	private boolean pump(Socket from, Socket to, long limit, boolean stopAtLimit) {
		try {
			InputStream in = from.getInputStream();
			OutputStream out = to.getOutputStream();
			byte[] buffer = new byte[8192];
			long copied = 0;
			int read;
			while ((read = in.read(buffer, 0, (int) Math.min(buffer.length, limit - copied))) > 0) {
				out.write(buffer, 0, read);
				out.flush();
				copied += read;
				if (stopAtLimit && copied >= limit) {
					return true;
				}
			}
			if (!to.isClosed()) {
				to.shutdownOutput();
			}
		}
		catch (IOException ex) {
			// closed or reset
		}
		return false;
	}

	private static void reset(Socket socket) {
		try {
			if (!socket.isClosed()) {
				if (socket.isConnected()) {
					socket.setSoLinger(true, 0);
				}
				socket.close();
			}
		}
		catch (IOException ex) {
			// already gone
		}
	}

}
