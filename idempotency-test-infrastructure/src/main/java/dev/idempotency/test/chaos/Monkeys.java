package dev.idempotency.test.chaos;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import dev.idempotency.test.launch.HttpNode;
import dev.idempotency.test.servers.FaultyTcpProxy;

/**
 * The fault injectors of a chaos run: each a thread that repeats its fault (a pause, then
 * a node killed, a link cut) until the run ends, noting what it did in a timeline with
 * the time since the run started. A fault that throws ends its thread and is kept in
 * {@link #failures()}: the run must fail on it, since its faults stopped.
 */
public final class Monkeys implements AutoCloseable {

	private final long originMillis;

	private final AtomicBoolean running = new AtomicBoolean(true);

	private final List<Thread> threads = new ArrayList<>();

	private final List<Throwable> failures = new CopyOnWriteArrayList<>();

	private final List<String> timeline = new CopyOnWriteArrayList<>();

	/** Monkeys of a run that started at {@code originMillis} (epoch milliseconds). */
	public Monkeys(long originMillis) {
		this.originMillis = originMillis;
	}

	/** Starts a thread that injects {@code fault} again and again until {@link #stop}. */
	public void start(String name, Fault fault) {
		Thread thread = new Thread(() -> {
			try {
				while (this.running.get()) {
					fault.inject();
				}
			}
			catch (Throwable ex) {
				this.failures.add(ex);
			}
		}, name);
		this.threads.add(thread);
		thread.start();
	}

	/**
	 * Every 2 to 6 s, kills one of {@code nodes} at random (SIGKILL) and starts it again
	 * 0.2 to 1 s later ({@link HttpNode#restart()}), drawing from {@code random}.
	 * @return the number of kills so far
	 */
	public AtomicInteger startKiller(List<HttpNode> nodes, Random random) {
		AtomicInteger kills = new AtomicInteger();
		start("chaos-killer", () -> {
			if (!sleep(2000 + random.nextInt(4000))) {
				return;
			}
			HttpNode victim = nodes.get(random.nextInt(nodes.size()));
			victim.kill();
			kills.incrementAndGet();
			event(victim.name() + " killed");
			Thread.sleep(200 + random.nextInt(800));
			victim.restart();
			event(victim.name() + " answering again");
		});
		return kills;
	}

	/**
	 * Every 2 to 6 s, cuts {@code link} (every connection reset, new ones refused) for
	 * 0.2 to 1.5 s, drawing from {@code random}.
	 * @return the number of cuts so far
	 */
	public AtomicInteger startCutter(FaultyTcpProxy link, String what, Random random) {
		AtomicInteger cuts = new AtomicInteger();
		start("chaos-cutter", () -> {
			if (!sleep(2000 + random.nextInt(4000))) {
				return;
			}
			int millis = 200 + random.nextInt(1300);
			link.cut(millis);
			cuts.incrementAndGet();
			event(what + " cut for " + millis + " ms");
		});
		return cuts;
	}

	/**
	 * Sleeps in short steps while the run goes on; false once it has ended (the fault
	 * then injects nothing more).
	 */
	public boolean sleep(long millis) throws InterruptedException {
		long deadline = System.nanoTime() + millis * 1_000_000;
		while (this.running.get() && System.nanoTime() - deadline < 0) {
			Thread.sleep(Math.min(100, Math.max(1, (deadline - System.nanoTime()) / 1_000_000)));
		}
		return this.running.get();
	}

	/** Notes a fault in the timeline. */
	public void event(String what) {
		this.timeline.add("%.2f s %s".formatted((System.currentTimeMillis() - this.originMillis) / 1000.0, what));
	}

	/** The faults, in order, each with its time since the run started. */
	public List<String> timeline() {
		return List.copyOf(this.timeline);
	}

	/** The faults that could not be injected or undone. */
	public List<Throwable> failures() {
		return List.copyOf(this.failures);
	}

	/** Ends the run: each thread finishes the fault it is in (undoing it) and stops. */
	public void stop() throws InterruptedException {
		this.running.set(false);
		for (Thread thread : this.threads) {
			thread.join();
		}
	}

	@Override
	public void close() throws InterruptedException {
		stop();
	}

	/** One fault, with its pause before ({@link #sleep}, cut short when the run ends). */
	@FunctionalInterface
	public interface Fault {

		void inject() throws Exception;

	}

}
