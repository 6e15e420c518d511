package dev.idempotency.autoconfigure.internal;

import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import dev.idempotency.core.internal.Decision;
import dev.idempotency.core.internal.Reservation;
import io.netty.channel.EventLoop;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.Connection;

import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.util.ClassUtils;

/**
 * The engine's steps as {@link Mono}s for the reactive doors (the WebFlux door and the
 * method door on {@code Mono}/{@code Flux}), and where the door goes on once a step ends.
 * <p>
 * A step that ends on the thread that is waiting for it (the in-memory store; a body read
 * and a reservation both on the request's event loop) goes on there, with no thread hop.
 * One that ends on another thread (a blocking store's on the bounded scheduler, Lettuce's
 * event loop, the JDK's delay scheduler after a wait for a run in flight) goes on on the
 * request's own event loop where the server is Reactor Netty (where WebFlux would run the
 * handler and write the answer anyway), else on Reactor's parallel scheduler. Going on on
 * the parallel scheduler for every request, as the door did, cost two hand-offs per
 * protected request (to a parallel thread, and back to the event loop to write the
 * answer) and the lock of that scheduler's delay queue, and ran the application's handler
 * on a thread WebFlux does not run it on.
 */
public final class EngineSteps {

	private static final boolean REACTOR_NETTY = ClassUtils.isPresent("reactor.netty.Connection",
			EngineSteps.class.getClassLoader());

	/**
	 * Goes on on the thread that ended the step if it is a non-blocking one, else on
	 * Reactor's parallel scheduler: for the method door, which has no request.
	 */
	public static final Executor NON_BLOCKING = (task) -> {
		if (Schedulers.isInNonBlockingThread()) {
			task.run();
		}
		else {
			Schedulers.parallel().schedule(task);
		}
	};

	private EngineSteps() {
	}

	/**
	 * Where a step of {@code request}'s protection goes on: its own event loop on Reactor
	 * Netty (at once when the step ended on it), else {@link #NON_BLOCKING}.
	 */
	public static Executor goingOnFor(ServerHttpRequest request) {
		if (REACTOR_NETTY) {
			Executor loop = NettyLoop.of(ServerHttpRequestDecorator.getNativeRequest(request));
			if (loop != null) {
				return loop;
			}
		}
		return NON_BLOCKING;
	}

	/**
	 * A step's result, going on through {@code goingOn} if it ends later on another
	 * thread; the step itself is not cancelled with the {@code Mono} (a record once begun
	 * is finished).
	 */
	public static <T> Mono<T> ended(CompletableFuture<T> step, Executor goingOn) {
		if (step.isDone()) {
			return done(step);
		}
		return Mono.fromFuture(step.whenCompleteAsync((result, failure) -> {
		}, goingOn), true);
	}

	/**
	 * A step that has ended, as {@link Mono#fromFuture} gives it (its value, empty for
	 * {@code null}, or its failure unwrapped) without subscribing to the future: most
	 * steps of a non-blocking store, and every step of the in-memory store, have ended by
	 * the time the door asks.
	 */
	private static <T> Mono<T> done(CompletableFuture<T> step) {
		T result;
		try {
			result = step.getNow(null);
		}
		catch (CompletionException ex) {
			return Mono.error((ex.getCause() != null) ? ex.getCause() : ex);
		}
		catch (CancellationException ex) {
			return Mono.error(ex);
		}
		return Mono.justOrEmpty(result);
	}

	/**
	 * The engine's decision; if its subscriber cancels (the client went away) before the
	 * decision reached it, {@code undelivered} gets a key reserved for it, to release.
	 * Once delivered, the run's own cancel handling decides.
	 */
	public static Mono<Decision> decision(CompletableFuture<Decision> decided, Executor goingOn,
			Consumer<Reservation> undelivered) {
		AtomicBoolean delivered = new AtomicBoolean();
		return ended(decided, goingOn).doOnNext((made) -> delivered.set(true))
			.doOnCancel(() -> decided.thenAccept((made) -> {
				Reservation reservation = (made instanceof Decision.Proceed proceed) ? proceed.reservation() : null;
				if (reservation != null && !delivered.get()) {
					undelivered.accept(reservation);
				}
			}));
	}

	/** Reactor Netty's types, loaded only where it is on the class path. */
	private static final class NettyLoop {

		static @Nullable Executor of(Object nativeRequest) {
			if (nativeRequest instanceof Connection connection) {
				EventLoop loop = connection.channel().eventLoop();
				return (task) -> {
					if (loop.inEventLoop()) {
						task.run();
					}
					else {
						loop.execute(task);
					}
				};
			}
			return null;
		}

	}

}
