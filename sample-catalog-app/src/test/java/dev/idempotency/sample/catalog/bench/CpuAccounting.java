package dev.idempotency.sample.catalog.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Where the CPU of a benchmark phase went, and (optionally) which core each party may
 * use.
 * <p>
 * Accounting: every thread of this JVM but the load driver's (named
 * {@value #CLIENT_THREAD_PREFIX}… and the {@code HttpClient-}… threads of
 * {@link java.net.http.HttpClient}), which is the application (Tomcat, the starter,
 * Lettuce, the catalog's H2; not GC and JIT, which only the whole process's
 * {@link Usage#jvmNanos} counts, together with the driver), and the store servers'
 * processes ({@code postgres}, {@code redis-server}) read from {@code /proc}. A thread
 * that ends during a phase (a Hikari adder, a trimmed Tomcat worker) takes its count with
 * it, so the application figure is a lower bound. The driver's own threads are not
 * counted apart for the same reason: the HTTP client's worker threads come and go.
 * <p>
 * Pinning ({@code bench.pin=true}): the application's threads get one core, the load
 * driver's threads and the store servers the other, so the store and the clients stand in
 * for other machines, as in production, and the application's core is the only one the
 * comparison is about. The servers' previous CPU masks are put back by {@link #close()}
 * (and by a shutdown hook).
 */
final class CpuAccounting implements AutoCloseable {

	static final String CLIENT_THREAD_PREFIX = "bench-client-";

	private static final Set<String> SERVER_COMMANDS = Set.of("postgres", "redis-server");

	private static final long TICK_NANOS = 10_000_000L; // USER_HZ = 100 on Linux

	private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();

	private final com.sun.management.OperatingSystemMXBean os = (com.sun.management.OperatingSystemMXBean) ManagementFactory
		.getOperatingSystemMXBean();

	private final String appCpus;

	private final String otherCpus;

	private final Map<Long, String> serverMasks = new LinkedHashMap<>();

	private final Thread restoreHook = new Thread(this::restoreServers, "bench-restore-affinity");

	private CpuAccounting(String appCpus, String otherCpus) {
		this.appCpus = appCpus;
		this.otherCpus = otherCpus;
	}

	/** Accounting only, nothing pinned. */
	static CpuAccounting unpinned() {
		return new CpuAccounting(null, null);
	}

	/**
	 * Accounting, and this JVM on {@code appCpus}, the driver's threads and the servers
	 * on {@code otherCpus}.
	 */
	static CpuAccounting pinned(String appCpus, String otherCpus) {
		CpuAccounting accounting = new CpuAccounting(appCpus, otherCpus);
		Runtime.getRuntime().addShutdownHook(accounting.restoreHook);
		taskset("-a", "-p", "-c", appCpus, Long.toString(ProcessHandle.current().pid()));
		for (long pid : serverPids()) {
			try {
				String mask = currentMask(pid);
				taskset("-a", "-p", "-c", otherCpus, Long.toString(pid));
				accounting.serverMasks.put(pid, mask);
			}
			catch (IllegalStateException ex) {
				if (Files.exists(Path.of("/proc", Long.toString(pid)))) {
					accounting.close();
					throw ex;
				}
			}
		}
		return accounting;
	}

	boolean isPinned() {
		return this.appCpus != null;
	}

	String describe() {
		return isPinned() ? "application threads on CPU " + this.appCpus + "; load driver threads and store servers ("
				+ this.serverMasks.size() + " processes) on CPU " + this.otherCpus : "not pinned";
	}

	/**
	 * Moves the load driver's threads that exist now to the other core(s); a no-op when
	 * not pinned.
	 */
	void pinDriverThreads() {
		if (!isPinned()) {
			return;
		}
		try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
			for (Path task : tasks.toList()) {
				String name = read(task.resolve("comm"));
				if (name != null && isDriverThread(name)) {
					taskset("-p", "-c", this.otherCpus, task.getFileName().toString());
				}
			}
		}
		catch (IOException ex) {
			throw new IllegalStateException("cannot list /proc/self/task", ex);
		}
	}

	/**
	 * CPU and user-mode CPU nanoseconds of the application's threads, by thread name
	 * without digits.
	 */
	Map<String, long[]> appThreadGroups() {
		Map<String, long[]> groups = new java.util.TreeMap<>();
		for (long id : this.threads.getAllThreadIds()) {
			java.lang.management.ThreadInfo info = this.threads.getThreadInfo(id);
			long cpu = this.threads.getThreadCpuTime(id);
			long user = this.threads.getThreadUserTime(id);
			if (info == null || cpu < 0 || isDriverThread(info.getThreadName())
					|| "main".equals(info.getThreadName())) {
				continue;
			}
			long[] sums = groups.computeIfAbsent(info.getThreadName().replaceAll("[0-9]+", "N"), (k) -> new long[2]);
			sums[0] += cpu;
			sums[1] += user;
		}
		return groups;
	}

	/**
	 * Voluntary and involuntary context switches of this JVM's threads alive now (all of
	 * them, the load driver's included), from {@code /proc/self/task/<tid>/status}.
	 */
	static long[] contextSwitches() {
		long[] sums = new long[2];
		try (Stream<Path> tasks = Files.list(Path.of("/proc/self/task"))) {
			for (Path task : tasks.toList()) {
				String status = read(task.resolve("status"));
				if (status == null) {
					continue;
				}
				for (String line : status.split("\n")) {
					if (line.startsWith("voluntary_ctxt_switches:")) {
						sums[0] += Long.parseLong(line.substring(line.indexOf(':') + 1).strip());
					}
					else if (line.startsWith("nonvoluntary_ctxt_switches:")) {
						sums[1] += Long.parseLong(line.substring(line.indexOf(':') + 1).strip());
					}
				}
			}
		}
		catch (IOException ex) {
			throw new IllegalStateException("cannot list /proc/self/task", ex);
		}
		return sums;
	}

	Usage now() {
		long app = 0;
		long[] ids = this.threads.getAllThreadIds();
		java.lang.management.ThreadInfo[] infos = this.threads.getThreadInfo(ids);
		for (int i = 0; i < ids.length; i++) {
			if (infos[i] == null) {
				continue;
			}
			long cpu = this.threads.getThreadCpuTime(ids[i]);
			if (cpu < 0) {
				continue;
			}
			String name = infos[i].getThreadName();
			if (!isDriverThread(name) && !"main".equals(name)) {
				app += cpu;
			}
		}
		return new Usage(this.os.getProcessCpuTime(), app, serverCpuNanos());
	}

	@Override
	public void close() {
		if (isPinned()) {
			restoreServers();
			Runtime.getRuntime().removeShutdownHook(this.restoreHook);
		}
	}

	private synchronized void restoreServers() {
		// Processes forked while pinned (new backends) inherited the pin: give every
		// server process the mask its first process had before.
		String mask = this.serverMasks.values().stream().findFirst().orElse(null);
		if (mask == null) {
			return;
		}
		List<String> failures = new ArrayList<>();
		for (long pid : serverPids()) {
			try {
				taskset("-a", "-p", this.serverMasks.getOrDefault(pid, mask), Long.toString(pid));
			}
			catch (IllegalStateException ex) {
				if (Files.exists(Path.of("/proc", Long.toString(pid)))) {
					failures.add(ex.getMessage()); // still running, still pinned: say so
				}
			}
		}
		this.serverMasks.clear();
		if (!failures.isEmpty()) {
			System.err.println("Could not give these store server processes their CPU mask back (run"
					+ " 'taskset -a -p " + mask + " <pid>'): " + failures);
		}
	}

	private static boolean isDriverThread(String name) {
		// Native names are cut at 15 characters.
		return name.startsWith(CLIENT_THREAD_PREFIX.substring(0, 12)) || name.startsWith("HttpClient-");
	}

	private static List<Long> serverPids() {
		List<Long> pids = new ArrayList<>();
		try (Stream<Path> processes = Files.list(Path.of("/proc"))) {
			for (Path process : processes.toList()) {
				String pid = process.getFileName().toString();
				if (pid.chars().allMatch(Character::isDigit)) {
					String name = read(process.resolve("comm"));
					if (name != null && SERVER_COMMANDS.contains(name)) {
						pids.add(Long.valueOf(pid));
					}
				}
			}
		}
		catch (IOException ex) {
			throw new IllegalStateException("cannot list /proc", ex);
		}
		return pids;
	}

	/**
	 * utime + stime of every store server process alive now (processes that ended are not
	 * counted).
	 */
	private static long serverCpuNanos() {
		long ticks = 0;
		for (long pid : serverPids()) {
			String stat = read(Path.of("/proc", Long.toString(pid), "stat"));
			if (stat == null) {
				continue;
			}
			// Fields after the command name, which is in parentheses: state is field 3,
			// utime 14, stime 15.
			String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
			ticks += Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
		}
		return ticks * TICK_NANOS;
	}

	private static String currentMask(long pid) {
		String out = taskset("-p", Long.toString(pid));
		return out.substring(out.lastIndexOf(':') + 1).strip();
	}

	private static String taskset(String... args) {
		List<String> command = new ArrayList<>();
		command.add("taskset");
		command.addAll(List.of(args));
		try {
			Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
			String out = new String(process.getInputStream().readAllBytes());
			if (process.waitFor() != 0) {
				throw new IllegalStateException(String.join(" ", command) + " failed: " + out);
			}
			return out;
		}
		catch (IOException ex) {
			throw new IllegalStateException("cannot run taskset (util-linux)", ex);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	private static String read(Path file) {
		try {
			return Files.readString(file).strip();
		}
		catch (IOException ex) {
			return null; // the thread or process ended meanwhile
		}
	}

	/** CPU nanoseconds at one moment; subtract two to get a phase's share. */
	record Usage(long jvmNanos, long appThreadNanos, long serverNanos) {

		Usage minus(Usage earlier) {
			return new Usage(this.jvmNanos - earlier.jvmNanos, this.appThreadNanos - earlier.appThreadNanos,
					this.serverNanos - earlier.serverNanos);
		}

		Usage plus(Usage other) {
			return new Usage(this.jvmNanos + other.jvmNanos, this.appThreadNanos + other.appThreadNanos,
					this.serverNanos + other.serverNanos);
		}

	}

}
