package dev.idempotency.core;

import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import dev.idempotency.core.internal.Answer;
import dev.idempotency.core.internal.Decision;
import dev.idempotency.core.internal.Fingerprints;
import dev.idempotency.core.internal.IdempotencyEngine;
import dev.idempotency.core.internal.IdempotentCall;
import dev.idempotency.core.internal.Reservation;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.StoredResponse;
import io.micrometer.observation.Observation;
import dev.idempotency.store.seal.Sealing;
import io.micrometer.observation.ObservationRegistry;
import org.jspecify.annotations.Nullable;

/**
 * Runs a callback at most once per idempotency key and answers every retry with its
 * stored result: the programmatic entry to the protocol, on which {@code @Idempotent} and
 * the HTTP door are the declarative ones.
 * <p>
 * {@link #execute} asks the store about the key first. A new key runs the callback and
 * stores its result (encoded by the {@link ResultCodec}); a key whose result is stored
 * returns that result decoded, without running the callback; a key used with another
 * {@link IdempotentRequest#fingerprint() fingerprint}, a key whose first call still runs
 * (after waiting up to the settings' in-flight wait), a malformed key or an unavailable
 * store throw an {@link IdempotencyErrorException}. A callback that throws stores nothing
 * and releases the key: a retry runs it again.
 * <p>
 * Build one over a store with {@link #builder(IdempotencyStore)} and {@link #close()} it
 * when done (it runs the heartbeat of long calls on a thread of its own); in a Spring
 * Boot application with the starter, inject the auto-configured one. The template
 * completes the record when the callback returns: it does not follow a transaction of the
 * caller ({@code @Idempotent} on a bean method does).
 *
 * @since 0.1.0
 */
public class IdempotencyTemplate implements AutoCloseable {

	private final IdempotencyEngine engine;

	private final boolean ownsEngine;

	private IdempotencyTemplate(IdempotencyEngine engine, boolean ownsEngine) {
		this.engine = engine;
		this.ownsEngine = ownsEngine;
	}

	/**
	 * Internal: a template over the starter's engine, which the starter starts and stops
	 * ({@link #close()} leaves it running). Applications use {@link #builder} or inject
	 * the auto-configured template.
	 * @param engine the engine
	 */
	public IdempotencyTemplate(IdempotencyEngine engine) {
		this(engine, false);
	}

	/**
	 * A builder of a template over {@code store}, with the default settings.
	 * @param store where the records are kept
	 * @return the builder
	 */
	public static Builder builder(IdempotencyStore store) {
		return new Builder(store);
	}

	/**
	 * Runs {@code callback} once for {@code request}'s key, or answers with the result
	 * stored for it.
	 * @param <T> the result's type
	 * @param <E> what the callback may throw
	 * @param request the key, its scope, the operation and the request's fingerprint
	 * @param codec stores the result and reads it back
	 * @param callback the operation
	 * @return the callback's result, or the stored result of an earlier call with the key
	 * @throws IdempotencyErrorException if the call is refused (see the class comment)
	 * @throws E what the callback threw; nothing is stored and the key is released
	 */
	public <T extends @Nullable Object, E extends Throwable> T execute(IdempotentRequest request, ResultCodec<T> codec,
			Callback<T, E> callback) throws E {
		Objects.requireNonNull(codec, "codec");
		Objects.requireNonNull(callback, "callback");
		IdempotentCall call = new IdempotentCall(request.scope(), List.of(request.key()),
				request.keyFormat().orElse(KeyFormat.OPAQUE), true, request.operation(),
				() -> Fingerprints.method(request.operation(), request.fingerprint()), List::of,
				IdempotentCall.Door.METHOD);
		Decision decision = this.engine.begin(call);
		if (decision instanceof Decision.Replay replay) {
			return codec.decode(replay.response().body());
		}
		if (decision instanceof Decision.Reject reject) {
			throw new IdempotencyErrorException(reject.error());
		}
		Reservation reservation = ((Decision.Proceed) decision).reservation();
		if (reservation == null) {
			// The store failed and the settings say to run unprotected.
			return callback.doInIdempotency();
		}
		T result;
		try (Observation.Scope scope = this.engine.openScope(reservation)) {
			result = callback.doInIdempotency();
		}
		catch (Throwable ex) {
			this.engine.failed(reservation, "the callback threw " + ex.getClass().getName(), ex);
			throw ex;
		}
		StoredResponse stored;
		try {
			byte[] body = codec.encode(result);
			codec.decode(body);
			stored = new StoredResponse(200, Map.of(), body);
		}
		catch (RuntimeException ex) {
			// Never store a result a retry could not read back: release the key instead.
			this.engine.failed(reservation, "the result cannot be stored: " + ex.getMessage());
			throw new IllegalStateException("The result of " + request.operation()
					+ " cannot be encoded and decoded again, so it is not stored and its key is released", ex);
		}
		if (this.engine.succeeded(reservation, stored) instanceof Answer.Recorded recorded) {
			// Record-after-success mode: another call of the same request recorded its
			// result first; that is the answer, to this call and to every retry.
			return codec.decode(recorded.response().body());
		}
		return result;
	}

	/**
	 * Stops the heartbeat thread of a template made by {@link #builder}; does nothing to
	 * the starter's template.
	 */
	@Override
	public void close() {
		if (this.ownsEngine) {
			this.engine.close();
		}
	}

	/**
	 * The operation that {@link IdempotencyTemplate#execute} runs at most once per key.
	 *
	 * @param <T> the result's type
	 * @param <E> what it may throw
	 */
	@FunctionalInterface
	public interface Callback<T extends @Nullable Object, E extends Throwable> {

		/**
		 * Runs the operation.
		 * @return its result
		 * @throws E if it fails: nothing is stored
		 */
		T doInIdempotency() throws E;

	}

	/** Builds an {@link IdempotencyTemplate}. */
	public static final class Builder {

		private final IdempotencyStore store;

		private IdempotencySettings settings = IdempotencySettings.defaults();

		private Clock clock = Clock.systemUTC();

		private IdempotencyListener listener = IdempotencyListener.NONE;

		private ObservationRegistry observationRegistry = ObservationRegistry.NOOP;

		private Sealing sealing = Sealing.none();

		private Builder(IdempotencyStore store) {
			this.store = Objects.requireNonNull(store, "store");
		}

		/**
		 * The settings (lifetime, lease, in-flight wait, mode...); the defaults if not
		 * set.
		 * @param settings the settings
		 * @return this builder
		 */
		public Builder settings(IdempotencySettings settings) {
			this.settings = Objects.requireNonNull(settings, "settings");
			return this;
		}

		/**
		 * The clock of the key window; the system's UTC clock if not set. The store's
		 * clock decides leases and expiry.
		 * @param clock the clock
		 * @return this builder
		 */
		public Builder clock(Clock clock) {
			this.clock = Objects.requireNonNull(clock, "clock");
			return this;
		}

		/**
		 * Told of every decision, run and store call; none if not set.
		 * @param listener the listener
		 * @return this builder
		 */
		public Builder listener(IdempotencyListener listener) {
			this.listener = Objects.requireNonNull(listener, "listener");
			return this;
		}

		/**
		 * Where each call is an {@code idempotency.request} observation; none if not set.
		 * @param observationRegistry the registry
		 * @return this builder
		 */
		public Builder observationRegistry(ObservationRegistry observationRegistry) {
			this.observationRegistry = Objects.requireNonNull(observationRegistry, "observationRegistry");
			return this;
		}

		/**
		 * How stored results are sealed and fingerprints keyed; nothing sealed if not
		 * set.
		 * @param sealing the sealing, for instance
		 * {@code Sealing.of(SealingKeys.of(keys, "k1"), false)}
		 * @return this builder
		 */
		public Builder sealing(Sealing sealing) {
			this.sealing = Objects.requireNonNull(sealing, "sealing");
			return this;
		}

		/**
		 * The template, its heartbeat thread started.
		 * @return the template; {@link IdempotencyTemplate#close() close} it when done
		 */
		public IdempotencyTemplate build() {
			IdempotencyEngine engine = new IdempotencyEngine(this.store, this.settings, this.clock, this.listener,
					this.observationRegistry, false, this.sealing);
			engine.start();
			return new IdempotencyTemplate(engine, true);
		}

	}

}
