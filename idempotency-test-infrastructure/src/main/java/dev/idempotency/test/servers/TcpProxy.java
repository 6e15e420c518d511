package dev.idempotency.test.servers;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import dev.idempotency.test.Ports;
import org.jspecify.annotations.Nullable;

/**
 * A TCP proxy on 127.0.0.1 in front of a store server, that a test can cut (listener and
 * every live connection closed: the store is unreachable) and restore on the same port,
 * or turn into a black hole: every connection, open or new, is still accepted and read,
 * but nothing is forwarded either way, as when a network path drops packets. Unlike a
 * refused connection, nothing tells the client that the server is gone: only its own
 * timeouts end a call.
 */
public final class TcpProxy implements AutoCloseable {

	private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

	private static final Duration REBIND_WITHIN = Duration.ofSeconds(5);

	private final int targetPort;

	private final int port;

	private final Set<Socket> live = ConcurrentHashMap.newKeySet();

	private ServerSocket listener;

	private volatile boolean blackholed;

	private TcpProxy(int targetPort) throws IOException {
		this.targetPort = targetPort;
		this.listener = Ports.PROXY.listen();
		this.port = this.listener.getLocalPort();
		accept(this.listener);
	}

	public static TcpProxy to(int targetPort) {
		try {
			return new TcpProxy(targetPort);
		}
		catch (IOException ex) {
			throw new IllegalStateException("cannot start the proxy", ex);
		}
	}

	public int port() {
		return this.port;
	}

	/**
	 * Closes the listener and every live connection: new connections are refused, open
	 * ones break.
	 */
	public synchronized void cut() {
		closeQuietly(this.listener);
		for (Socket socket : this.live) {
			closeQuietly(socket);
		}
		this.live.clear();
	}

	/**
	 * From now on nothing is forwarded, on open connections and on new ones, until
	 * {@link #close()}.
	 */
	public void blackhole() {
		this.blackholed = true;
	}

	/**
	 * Ends a black hole: every connection is closed (those opened during it reach no
	 * server, and bytes dropped on the others would leave them out of step), and the
	 * proxy forwards new connections again, on the same port.
	 */
	public synchronized void heal() {
		cut();
		this.blackholed = false;
		restore();
	}

	/**
	 * Listens again, on the same port. The connections {@link #cut()} has just closed can
	 * hold the port for a moment (CI saw the bind refused with nothing left on the port
	 * when looked at right after): the bind is tried again for up to
	 * {@link #REBIND_WITHIN}.
	 */
	public synchronized void restore() {
		long deadline = System.nanoTime() + REBIND_WITHIN.toNanos();
		int attempts = 0;
		while (true) {
			attempts++;
			try {
				this.listener = Ports.listen(this.port);
				break;
			}
			catch (IOException ex) {
				if (System.nanoTime() - deadline > 0) {
					throw new IllegalStateException(
							"cannot listen on " + this.port + " again (" + attempts + " attempts)", ex);
				}
				sleep(20);
			}
		}
		accept(this.listener);
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("interrupted while listening again", ex);
		}
	}

	@Override
	public void close() {
		cut();
	}

	private void accept(ServerSocket server) {
		daemon("proxy-accept-" + this.port, () -> {
			while (!server.isClosed()) {
				Socket client;
				try {
					client = server.accept();
				}
				catch (IOException ex) {
					return;
				}
				this.live.add(client);
				if (this.blackholed) {
					pump(client, null);
					continue;
				}
				Socket upstream = new Socket();
				this.live.add(upstream);
				try {
					upstream.connect(new InetSocketAddress(LOOPBACK, this.targetPort), 2000);
				}
				catch (IOException ex) {
					closeQuietly(client);
					closeQuietly(upstream);
					continue;
				}
				// cut() closes the listener before the live sockets: a connection
				// accepted meanwhile is closed here.
				if (server.isClosed()) {
					closeQuietly(client);
					closeQuietly(upstream);
					return;
				}
				pump(client, upstream);
				pump(upstream, client);
			}
		});
	}

	/**
	 * Copies until the proxy is cut or the black hole opens, then only reads (so the
	 * sender's writes never block).
	 */
	private void pump(Socket from, @Nullable Socket to) {
		daemon("proxy-pump-" + this.port, () -> {
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
				// the connection was cut or closed by one side
			}
			finally {
				// a black hole keeps its connections open: the peer learns nothing
				if (!this.blackholed) {
					closeQuietly(from);
					this.live.remove(from);
					if (to != null) {
						closeQuietly(to);
						this.live.remove(to);
					}
				}
			}
		});
	}

	private static void daemon(String name, Runnable task) {
		Thread thread = new Thread(task, name);
		thread.setDaemon(true);
		thread.start();
	}

	private static void closeQuietly(AutoCloseable closeable) {
		try {
			closeable.close();
		}
		catch (Exception ex) {
			// already closed
		}
	}

}
