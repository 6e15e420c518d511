import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;

/**
 * What one Redis round trip costs on this machine, without the starter: the floor under
 * the Redis store's two script calls per keyed request. 16 threads each send
 * {@code EVALSHA} of a one-line script ({@code EXISTS}) and wait for the answer, through
 * Lettuce's synchronous API on one shared connection (as the store does: the request
 * thread hands the command to Netty's event loop and waits), then through a blocking
 * socket of their own (no event loop), alternating. Per round trip: CPU of this JVM,
 * CPU of every redis-server process, voluntary context switches of this JVM, wall time.
 * The first two rounds warm up and are not printed.
 * <p>
 * From sample-catalog-app, after building target/cp.txt as docs/benchmarks.md says:
 * <pre>
 * java -cp $(cat target/cp.txt) bench/RedisRoundTrip.java [calls per thread and round, 5000]
 * </pre>
 */
public class RedisRoundTrip {

	private static final int THREADS = 16;

	private static final int ROUNDS = 8;

	public static void main(String[] args) throws Exception {
		int calls = (args.length > 0) ? Integer.parseInt(args[0]) : 5000;
		RedisClient client = RedisClient.create("redis://127.0.0.1:6379");
		StatefulRedisConnection<String, String> connection = client.connect();
		RedisCommands<String, String> sync = connection.sync();
		String sha = sync.scriptLoad("return redis.call('EXISTS', KEYS[1])");
		com.sun.management.OperatingSystemMXBean os = (com.sun.management.OperatingSystemMXBean) ManagementFactory
			.getOperatingSystemMXBean();
		Socket[] sockets = new Socket[THREADS];
		for (int i = 0; i < THREADS; i++) {
			sockets[i] = new Socket("127.0.0.1", 6379);
			sockets[i].setTcpNoDelay(true);
		}
		ExecutorService threads = Executors.newFixedThreadPool(THREADS);
		for (int round = 0; round < ROUNDS; round++) {
			for (String mode : new String[] { "lettuce", "socket" }) {
				long cpu = os.getProcessCpuTime();
				long redis = redisTicks();
				long switches = voluntarySwitches();
				long start = System.nanoTime();
				CountDownLatch done = new CountDownLatch(THREADS);
				for (int t = 0; t < THREADS; t++) {
					int thread = t;
					threads.execute(() -> {
						try {
							if (mode.equals("lettuce")) {
								for (int i = 0; i < calls; i++) {
									sync.evalsha(sha, ScriptOutputType.INTEGER, "bench:rt:" + thread + ":" + i);
								}
							}
							else {
								blocking(sockets[thread], sha, thread, calls);
							}
						}
						catch (IOException ex) {
							ex.printStackTrace();
						}
						finally {
							done.countDown();
						}
					});
				}
				done.await();
				double n = (double) calls * THREADS;
				if (round >= 2) {
					System.out.printf("%-7s app %5.1f µs, redis-server %5.1f µs, app voluntary switches %.2f,"
							+ " wall %5.1f µs per round trip%n", mode, (os.getProcessCpuTime() - cpu) / 1000.0 / n,
							(redisTicks() - redis) * 10_000.0 / n, (voluntarySwitches() - switches) / n,
							(System.nanoTime() - start) / 1000.0 / n);
				}
			}
		}
		threads.shutdown();
		connection.close();
		client.shutdown();
	}

	private static void blocking(Socket socket, String sha, int thread, int calls) throws IOException {
		OutputStream out = new BufferedOutputStream(socket.getOutputStream());
		InputStream in = new BufferedInputStream(socket.getInputStream());
		for (int i = 0; i < calls; i++) {
			String key = "bench:rt:" + thread + ":" + i;
			String command = "*4\r\n$7\r\nEVALSHA\r\n$40\r\n" + sha + "\r\n$1\r\n1\r\n$" + key.length() + "\r\n" + key
					+ "\r\n";
			out.write(command.getBytes(StandardCharsets.US_ASCII));
			out.flush();
			int c;
			while ((c = in.read()) != '\n') {
				if (c < 0) {
					throw new EOFException();
				}
			}
		}
	}

	/** utime + stime of every redis-server process, in clock ticks (1/100 s). */
	private static long redisTicks() throws IOException {
		long ticks = 0;
		try (DirectoryStream<Path> processes = Files.newDirectoryStream(Paths.get("/proc"), "[0-9]*")) {
			for (Path process : processes) {
				try {
					String stat = Files.readString(process.resolve("stat"));
					if (stat.contains("(redis-server)")) {
						String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
						ticks += Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
					}
				}
				catch (IOException ex) {
					// gone meanwhile
				}
			}
		}
		return ticks;
	}

	private static long voluntarySwitches() throws IOException {
		long switches = 0;
		try (DirectoryStream<Path> tasks = Files.newDirectoryStream(Paths.get("/proc/self/task"))) {
			for (Path task : tasks) {
				try {
					for (String line : Files.readAllLines(task.resolve("status"))) {
						if (line.startsWith("voluntary_ctxt_switches")) {
							switches += Long.parseLong(line.split("\\s+")[1]);
						}
					}
				}
				catch (IOException ex) {
					// gone meanwhile
				}
			}
		}
		return switches;
	}

}
