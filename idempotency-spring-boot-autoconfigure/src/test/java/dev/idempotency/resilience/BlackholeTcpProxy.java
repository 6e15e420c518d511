package dev.idempotency.resilience;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A TCP proxy on 127.0.0.1 in front of a server that a test can turn into a black hole:
 * every connection, open or new, is still accepted and read, but nothing is forwarded
 * either way, as when a network path drops packets. Unlike a refused connection, nothing
 * tells the client that the server is gone: only its own timeouts end a call.
 * {@link #close()} then closes everything.
 */
final class BlackholeTcpProxy implements AutoCloseable {

	private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

	private final int targetPort;

	private final ServerSocket listener;

	private final Set<Socket> live = ConcurrentHashMap.newKeySet();

	private volatile boolean blackholed;

	BlackholeTcpProxy(int targetPort) throws IOException {
		this.targetPort = targetPort;
		this.listener = new ServerSocket();
		this.listener.bind(new InetSocketAddress(LOOPBACK, 0));
		TcpProxy.daemon("blackhole-accept", this::accept);
	}

	int port() {
		return this.listener.getLocalPort();
	}

	/** From now on nothing is forwarded, on open connections and on new ones. */
	void blackhole() {
		this.blackholed = true;
	}

	@Override
	public void close() {
		TcpProxy.closeQuietly(this.listener);
		for (Socket socket : this.live) {
			TcpProxy.closeQuietly(socket);
		}
		this.live.clear();
	}

	private void accept() {
		while (!this.listener.isClosed()) {
			Socket client;
			try {
				client = this.listener.accept();
			}
			catch (IOException ex) {
				return;
			}
			this.live.add(client);
			if (this.blackholed) {
				TcpProxy.daemon("blackhole-swallow", () -> pump(client, null));
				continue;
			}
			Socket upstream = new Socket();
			this.live.add(upstream);
			try {
				upstream.connect(new InetSocketAddress(LOOPBACK, this.targetPort), 2000);
			}
			catch (IOException ex) {
				TcpProxy.closeQuietly(client);
				TcpProxy.closeQuietly(upstream);
				continue;
			}
			TcpProxy.daemon("blackhole-up", () -> pump(client, upstream));
			TcpProxy.daemon("blackhole-down", () -> pump(upstream, client));
		}
	}

	/**
	 * Copies until the black hole opens, then only reads (so the sender's writes never
	 * block).
	 */
	private void pump(Socket from, Socket to) {
		byte[] buffer = new byte[16 * 1024];
		try (InputStream in = from.getInputStream()) {
			OutputStream out = (to != null) ? to.getOutputStream() : null;
			int read;
			while ((read = in.read(buffer)) >= 0) {
				if (!this.blackholed && out != null) {
					out.write(buffer, 0, read);
					out.flush();
				}
			}
		}
		catch (IOException ex) {
			// closed by close() or by one side
		}
		finally {
			if (!this.blackholed) {
				TcpProxy.closeQuietly(from);
				if (to != null) {
					TcpProxy.closeQuietly(to);
				}
			}
		}
	}

}
