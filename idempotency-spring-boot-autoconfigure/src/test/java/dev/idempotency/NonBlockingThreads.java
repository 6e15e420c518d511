package dev.idempotency;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import reactor.blockhound.BlockHound;
import reactor.blockhound.BlockingOperationError;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * BlockHound for the tests of what must not block: a blocking call on a non-blocking
 * thread (Netty's and Lettuce's event loops, Reactor's parallel scheduler) fails where it
 * is made and is recorded with its stack, so that a test fails on it even where the
 * failure itself is swallowed (a callback on a client's event loop).
 */
public final class NonBlockingThreads {

	private static final List<String> blockingCalls = new ArrayList<>();

	static {
		BlockHound.install((builder) -> builder
			// Netty 4.2's adaptive allocator takes a lock of its own when it grows
			// its magazines, also on an event loop (a Lettuce channel's registration),
			// and Netty's BlockHound integration does not list it yet: failing there
			// left a Redis Cluster connection's handshake hanging for a minute.
			.allowBlockingCallsInside("io.netty.buffer.AdaptivePoolingAllocator$MagazineGroup", "tryExpandMagazines")
			// Netty loads its native transport once, reading it from its jar, in the
			// class initialization of whatever first asks for it: in a JVM that runs
			// several suites, that may be a database client's first connection on a
			// Reactor thread. Failing there left the class unusable for the JVM's later
			// suites.
			.allowBlockingCallsInside("io.netty.util.internal.NativeLibraryLoader", "load")
			// Lettuce guards a connection's writers with a lock of its own, held for the
			// hand-over of a command to its channel: many requests sending on one shared
			// connection at once (64 first requests) wait on it from event loops.
			.allowBlockingCallsInside("io.lettuce.core.protocol.SharedLock", "incrementWriters")
			.allowBlockingCallsInside("io.lettuce.core.protocol.SharedLock", "decrementWriters")
			.blockingMethodCallback((method) -> {
				StringWriter stack = new StringWriter();
				new Exception(method + " on " + Thread.currentThread().getName())
					.printStackTrace(new PrintWriter(stack));
				synchronized (blockingCalls) {
					blockingCalls.add(stack.toString());
				}
				throw new BlockingOperationError(method);
			}));
	}

	private NonBlockingThreads() {
	}

	/** Installs BlockHound, once per JVM. */
	public static void install() {
		// the static initializer does it
	}

	/**
	 * The canary: a thread of Reactor's parallel scheduler that sleeps fails, so
	 * BlockHound is on where the tests run.
	 */
	public static void assertBlockingIsDetected() {
		assertThatExceptionOfType(RuntimeException.class).isThrownBy(() -> Mono.fromCallable(() -> {
			Thread.sleep(1);
			return 1;
		}).subscribeOn(Schedulers.parallel()).block(Duration.ofSeconds(10)))
			.havingRootCause()
			.isInstanceOf(BlockingOperationError.class);
		synchronized (blockingCalls) {
			blockingCalls.removeIf((call) -> call.contains("assertBlockingIsDetected"));
		}
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

}
