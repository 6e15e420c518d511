package dev.idempotency.core;

import java.time.Duration;
import java.util.Objects;

import dev.idempotency.core.internal.Answer;

/**
 * The engine's configuration, independent of how it was configured, grouped as it is
 * used: the key window (lifetime, grace, clock skew, key age policy), the {@link Lease}
 * of a running owner, the answer to a duplicate still {@link InFlight in flight}, what to
 * do on a {@link StoreFailure}, the largest stored body and the {@link Mode}. Build it
 * with {@link #builder()}, which starts from the defaults (the starter's properties
 * repeat them as literals for the configuration processor; a test checks that both
 * agree). Each record checks its values and throws {@link IllegalArgumentException}
 * naming the value at fault; the starter checks its properties first, in their own names.
 *
 * @param lifetime how long clients may reuse a key
 * @param grace extra retention beyond the lifetime
 * @param lease how long a running owner is presumed alive, and how often it says so
 * @param clockSkew how far in the future a key's timestamp may be
 * @param keyAgePolicy reject or only warn about keys outside their time window
 * @param inFlight how a duplicate of a request still running is answered
 * @param storeFailure what to do when the store fails
 * @param maxBodyBytes largest response body stored
 * @param mode how the engine guards an operation: a lease-held reservation, or one
 * conditional record after it succeeded
 * @since 0.1.0
 */
public record IdempotencySettings(Duration lifetime, Duration grace, Lease lease, Duration clockSkew,
		KeyAgePolicy keyAgePolicy, InFlight inFlight, StoreFailure storeFailure, long maxBodyBytes, Mode mode) {

	/**
	 * The largest stored answer: a held answer lives in one byte array until it is
	 * stored.
	 */
	public static final long MAX_STORED_BODY_BYTES = 1L << 30;

	public IdempotencySettings {
		requirePositive(lifetime, "lifetime");
		requireNotNegative(grace, "grace");
		Objects.requireNonNull(lease, "lease");
		if (lease.duration().compareTo(lifetime.plus(grace)) > 0) {
			throw new IllegalArgumentException(
					"lease (" + lease.duration() + ") must not be longer than lifetime + grace (" + lifetime.plus(grace)
							+ "): a record would expire while its owner still runs");
		}
		requireNotNegative(clockSkew, "clockSkew");
		Objects.requireNonNull(keyAgePolicy, "keyAgePolicy");
		Objects.requireNonNull(inFlight, "inFlight");
		Objects.requireNonNull(storeFailure, "storeFailure");
		Objects.requireNonNull(mode, "mode");
		if (maxBodyBytes < 0 || maxBodyBytes > MAX_STORED_BODY_BYTES) {
			throw new IllegalArgumentException("maxBodyBytes must be from 0 to " + MAX_STORED_BODY_BYTES
					+ " (an answer is held in memory until it is stored), was " + maxBodyBytes);
		}
	}

	/** The defaults, as {@link #builder()} starts with them. */
	public static IdempotencySettings defaults() {
		return builder().build();
	}

	/**
	 * A builder that starts from the defaults: lifetime 30 minutes, grace 5 minutes,
	 * lease 30 seconds with a heartbeat every 10 seconds, clock skew 1 minute, keys
	 * outside their window rejected, in-flight wait 2 seconds polled every 50 ms and
	 * answered 409 with Retry-After 1 second, fail-closed with Retry-After 5 seconds,
	 * bodies up to 1 MB stored, lease mode.
	 */
	public static Builder builder() {
		return new Builder();
	}

	/** A builder that starts from these settings. */
	public Builder toBuilder() {
		return new Builder().lifetime(this.lifetime)
			.grace(this.grace)
			.lease(this.lease.duration())
			.heartbeatInterval(this.lease.heartbeatInterval())
			.clockSkew(this.clockSkew)
			.keyAgePolicy(this.keyAgePolicy)
			.inFlightWait(this.inFlight.maxWait())
			.inFlightPollInterval(this.inFlight.pollInterval())
			.inFlightStatus(this.inFlight.status())
			.inFlightRetryAfter(this.inFlight.retryAfter())
			.failureMode(this.storeFailure.mode())
			.storeRetryAfter(this.storeFailure.retryAfter())
			.maxBodyBytes(this.maxBodyBytes)
			.mode(this.mode);
	}

	/**
	 * How long a record is kept from its reservation: lifetime + grace. For a UUIDv7 key
	 * stamped ahead of the clock the engine adds how far ahead (at most the clock skew).
	 */
	public Duration retention() {
		return this.lifetime.plus(this.grace);
	}

	private static void requirePositive(Duration value, String name) {
		if (value == null || value.isNegative() || value.isZero()) {
			throw new IllegalArgumentException(name + " must be positive, was " + value);
		}
	}

	private static void requireNotNegative(Duration value, String name) {
		if (value == null || value.isNegative()) {
			throw new IllegalArgumentException(name + " must not be negative, was " + value);
		}
	}

	/**
	 * The lease of a running owner (lease mode only).
	 *
	 * @param duration how long an in-progress owner is presumed alive without a heartbeat
	 * @param heartbeatInterval the longest time between two lease extensions of a running
	 * owner (one sweep of the heartbeat thread's duration aside); at most half the
	 * duration
	 */
	public record Lease(Duration duration, Duration heartbeatInterval) {

		public Lease {
			requirePositive(duration, "lease");
			requirePositive(heartbeatInterval, "heartbeatInterval");
			if (heartbeatInterval.multipliedBy(2).compareTo(duration) > 0) {
				throw new IllegalArgumentException(
						"heartbeatInterval (" + heartbeatInterval + ") must be at most half of lease (" + duration
								+ "): a running owner's beats are up to one heartbeatInterval apart, and the rest"
								+ " of the lease is the margin for the store round trip and a late heartbeat thread");
			}
		}

	}

	/**
	 * How a duplicate of a request that still runs is answered.
	 *
	 * @param maxWait how long a duplicate waits for the first request to finish
	 * @param pollInterval how often a waiting duplicate looks at the store
	 * @param status the status for a duplicate still in flight after the wait
	 * @param retryAfter Retry-After with an in-flight answer
	 */
	public record InFlight(Duration maxWait, Duration pollInterval, InFlightStatus status, Duration retryAfter) {

		public InFlight {
			requireNotNegative(maxWait, "inFlight.maxWait");
			requirePositive(pollInterval, "inFlight.pollInterval");
			Objects.requireNonNull(status, "inFlight.status");
			requireNotNegative(retryAfter, "inFlight.retryAfter");
		}

	}

	/**
	 * What to do when the store fails.
	 *
	 * @param mode fail closed (answer 503) or fail open (run unprotected)
	 * @param retryAfter Retry-After when the store is unavailable
	 */
	public record StoreFailure(FailureMode mode, Duration retryAfter) {

		public StoreFailure {
			Objects.requireNonNull(mode, "storeFailure.mode");
			requireNotNegative(retryAfter, "storeFailure.retryAfter");
		}

	}

	/**
	 * Builds settings by name; {@link #build()} validates them as the records do.
	 */
	public static final class Builder {

		private Duration lifetime = Duration.ofMinutes(30);

		private Duration grace = Duration.ofMinutes(5);

		private Duration lease = Duration.ofSeconds(30);

		private Duration heartbeatInterval = Duration.ofSeconds(10);

		private Duration clockSkew = Duration.ofMinutes(1);

		private KeyAgePolicy keyAgePolicy = KeyAgePolicy.REJECT;

		private Duration inFlightWait = Duration.ofSeconds(2);

		private Duration inFlightPollInterval = Duration.ofMillis(50);

		private InFlightStatus inFlightStatus = InFlightStatus.CONFLICT;

		private Duration inFlightRetryAfter = Duration.ofSeconds(1);

		private FailureMode failureMode = FailureMode.FAIL_CLOSED;

		private Duration storeRetryAfter = Duration.ofSeconds(5);

		private long maxBodyBytes = 1024 * 1024;

		private Mode mode = Mode.LEASE;

		private Builder() {
		}

		public Builder lifetime(Duration lifetime) {
			this.lifetime = lifetime;
			return this;
		}

		public Builder grace(Duration grace) {
			this.grace = grace;
			return this;
		}

		/** The {@link Lease#duration() lease}. */
		public Builder lease(Duration lease) {
			this.lease = lease;
			return this;
		}

		/** The {@link Lease#heartbeatInterval() heartbeat interval} of the lease. */
		public Builder heartbeatInterval(Duration heartbeatInterval) {
			this.heartbeatInterval = heartbeatInterval;
			return this;
		}

		public Builder clockSkew(Duration clockSkew) {
			this.clockSkew = clockSkew;
			return this;
		}

		public Builder keyAgePolicy(KeyAgePolicy keyAgePolicy) {
			this.keyAgePolicy = keyAgePolicy;
			return this;
		}

		/** The {@link InFlight#maxWait() wait} of a duplicate in flight. */
		public Builder inFlightWait(Duration inFlightWait) {
			this.inFlightWait = inFlightWait;
			return this;
		}

		/** The {@link InFlight#pollInterval() poll interval} of a duplicate in flight. */
		public Builder inFlightPollInterval(Duration inFlightPollInterval) {
			this.inFlightPollInterval = inFlightPollInterval;
			return this;
		}

		/** The {@link InFlight#status() status} of a duplicate still in flight. */
		public Builder inFlightStatus(InFlightStatus inFlightStatus) {
			this.inFlightStatus = inFlightStatus;
			return this;
		}

		/** The {@link InFlight#retryAfter() Retry-After} of a duplicate in flight. */
		public Builder inFlightRetryAfter(Duration inFlightRetryAfter) {
			this.inFlightRetryAfter = inFlightRetryAfter;
			return this;
		}

		/** The {@link StoreFailure#mode() mode} on a store failure. */
		public Builder failureMode(FailureMode failureMode) {
			this.failureMode = failureMode;
			return this;
		}

		/** The {@link StoreFailure#retryAfter() Retry-After} on a store failure. */
		public Builder storeRetryAfter(Duration storeRetryAfter) {
			this.storeRetryAfter = storeRetryAfter;
			return this;
		}

		public Builder maxBodyBytes(long maxBodyBytes) {
			this.maxBodyBytes = maxBodyBytes;
			return this;
		}

		public Builder mode(Mode mode) {
			this.mode = mode;
			return this;
		}

		public IdempotencySettings build() {
			return new IdempotencySettings(this.lifetime, this.grace, new Lease(this.lease, this.heartbeatInterval),
					this.clockSkew, this.keyAgePolicy,
					new InFlight(this.inFlightWait, this.inFlightPollInterval, this.inFlightStatus,
							this.inFlightRetryAfter),
					new StoreFailure(this.failureMode, this.storeRetryAfter), this.maxBodyBytes, this.mode);
		}

	}

	/** What to do with a key whose timestamp is outside its window. */
	public enum KeyAgePolicy {

		/**
		 * Answer 400: a key past its window could re-run an operation whose record was
		 * purged.
		 */
		REJECT,

		/** Log a warning and go on. */
		WARN

	}

	/** The answer to a duplicate that is still in flight after the wait. */
	public enum InFlightStatus {

		/** 409 Conflict, as the IETF draft says. */
		CONFLICT(409),

		/** 503 Service Unavailable with Retry-After, which Iceberg clients retry. */
		SERVICE_UNAVAILABLE(503);

		private final int status;

		InFlightStatus(int status) {
			this.status = status;
		}

		public int status() {
			return this.status;
		}

	}

	/** What to do when the store fails. */
	public enum FailureMode {

		/** Answer 503 with Retry-After; nothing runs. */
		FAIL_CLOSED,

		/** Run the request unprotected; logged and counted. */
		FAIL_OPEN

	}

	/** How the engine guards an operation against running twice. */
	public enum Mode {

		/**
		 * Reserve the key (in progress, with a lease kept alive by heartbeats) before the
		 * operation runs, then store or release its result: a duplicate never runs while
		 * the first is alive. Two store writes for a new key (reserve, complete), plus a
		 * heartbeat per interval while it runs.
		 */
		LEASE,

		/**
		 * Record after success: read the key before the operation (replay, refuse or
		 * proceed), run it without writing to the store, then record a successful (2xx)
		 * response with one conditional insert. One read and one write for a new key,
		 * nothing left in progress by a crash; attempts racing with a new key may each
		 * run, and once one success is recorded it is the answer to all of them and to
		 * every retry.
		 */
		RECORD_AFTER_SUCCESS

	}

}
