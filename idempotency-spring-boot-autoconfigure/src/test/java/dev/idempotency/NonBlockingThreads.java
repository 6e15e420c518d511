package dev.idempotency;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestPlan;
import reactor.blockhound.BlockHound;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * BlockHound for the tests of what must not block: while a suite that watches runs
 * ({@code @ExtendWith(NonBlockingThreads.class)}), a blocking call on a non-blocking
 * thread (Netty's and Lettuce's event loops, Reactor's parallel scheduler) is recorded
 * with its stack, and the suite's tests fail on what was recorded
 * ({@link #assertNoneBlocked()}), also where the call was made on a client's event loop.
 * <p>
 * BlockHound is installed when the test JVM starts ({@link AtStart}), before any thread
 * of Reactor, Netty or Lettuce exists: BlockHound allows the parks of an idle worker
 * inside {@code ScheduledThreadPoolExecutor$DelayedWorkQueue.take} by code it adds at the
 * start of that method, and a worker already waiting there when BlockHound was installed
 * later (its scheduler made by an earlier test class of the JVM) never ran that code. Its
 * next park in the same call was reported as blocking, and the error thrown there left
 * the queue's lock without its owner and with a waiter that would never wake up: the
 * worker died with an {@code IllegalMonitorStateException}, the scheduler's other workers
 * waited on that lock for ever, and the suites hung.
 * <p>
 * A blocking call is recorded, not failed where it is made: an error thrown out of a park
 * inside the JDK's locks leaves them broken for the rest of the JVM (as above, or a
 * Lettuce connection's handshake hanging), where a record fails the one test, with the
 * stack, and the JVM's other suites run on.
 */
public final class NonBlockingThreads implements BeforeAllCallback, AfterAllCallback {

	private static final List<String> blockingCalls = new ArrayList<>();

	/** Whether a suite that watches runs: other suites are as without BlockHound. */
	private static volatile boolean watching;

	static {
		BlockHound.install((builder) -> builder
			// Netty 4.2's adaptive allocator takes a lock of its own when it grows
			// its magazines, also on an event loop (a Lettuce channel's registration),
			// and Netty's BlockHound integration does not list it yet.
			.allowBlockingCallsInside("io.netty.buffer.AdaptivePoolingAllocator$MagazineGroup", "tryExpandMagazines")
			// Netty loads its native transport once, reading it from its jar, in the
			// class initialization of whatever first asks for it: in a JVM that runs
			// several suites, that may be a database client's first connection on a
			// Reactor thread.
			.allowBlockingCallsInside("io.netty.util.internal.NativeLibraryLoader", "load")
			// Lettuce guards a connection's writers with a lock of its own, held for the
			// hand-over of a command to its channel: many requests sending on one shared
			// connection at once (64 first requests) wait on it from event loops.
			.allowBlockingCallsInside("io.lettuce.core.protocol.SharedLock", "incrementWriters")
			.allowBlockingCallsInside("io.lettuce.core.protocol.SharedLock", "decrementWriters")
			// Lettuce's Redis Cluster connection keeps its connection per slot under a
			// lock
			// of its own, taken for each command that looks its connection up: 64 first
			// requests on one key contend for it on event loops.
			.allowBlockingCallsInside("io.lettuce.core.cluster.PooledClusterConnectionProvider", "getConnectionAsync")
			.blockingMethodCallback((method) -> {
				if (!watching) {
					return;
				}
				StringWriter stack = new StringWriter();
				new Exception(method + " on " + Thread.currentThread().getName())
					.printStackTrace(new PrintWriter(stack));
				synchronized (blockingCalls) {
					blockingCalls.add(stack.toString());
				}
			}));
	}

	/** Installs BlockHound, once per JVM. */
	static void install() {
		// the static initializer does it
	}

	/** From the start of a suite: blocking calls on non-blocking threads are recorded. */
	@Override
	public void beforeAll(ExtensionContext context) {
		synchronized (blockingCalls) {
			blockingCalls.clear();
		}
		watching = true;
	}

	/** After the suite: no longer. */
	@Override
	public void afterAll(ExtensionContext context) {
		watching = false;
	}

	/**
	 * The canary: the sleep of a thread of Reactor's parallel scheduler is recorded, so
	 * BlockHound is on where the tests run.
	 */
	public static void assertBlockingIsDetected() {
		assertThat(Mono.fromCallable(() -> {
			Thread.sleep(1);
			return 1;
		}).subscribeOn(Schedulers.parallel()).block(Duration.ofSeconds(10))).isEqualTo(1);
		List<String> canary;
		synchronized (blockingCalls) {
			canary = blockingCalls.stream().filter((call) -> call.contains("assertBlockingIsDetected")).toList();
			blockingCalls.removeAll(canary);
		}
		assertThat(canary).as("the canary's sleep on a parallel thread")
			.singleElement()
			.asString()
			.contains("java.lang.Thread.sleep on parallel-");
	}

	/** No blocking call was made on a non-blocking thread since the last look. */
	public static void assertNoneBlocked() {
		List<String> seen;
		synchronized (blockingCalls) {
			seen = List.copyOf(blockingCalls);
			blockingCalls.clear();
		}
		assertThat(seen).as("blocking calls on non-blocking threads").isEmpty();
	}

	/**
	 * Installs BlockHound when a test JVM starts to run tests, before any test class runs
	 * (a listener of JUnit's launcher, registered in the tests'
	 * {@code META-INF/services/org.junit.platform.launcher.TestExecutionListener}). Not
	 * when the listener is made: surefire makes one in Maven's own JVM too, which runs no
	 * test.
	 */
	public static final class AtStart implements TestExecutionListener {

		@Override
		public void testPlanExecutionStarted(TestPlan testPlan) {
			install();
		}

	}

}
