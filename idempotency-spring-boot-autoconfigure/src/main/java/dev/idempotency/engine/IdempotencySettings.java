package dev.idempotency.engine;

import java.time.Duration;
import java.util.Objects;

/**
 * The engine's configuration, independent of how it was configured.
 *
 * @param lifetime how long clients may reuse a key
 * @param grace extra retention beyond the lifetime
 * @param lease how long an in-progress owner is presumed alive without a heartbeat
 * @param heartbeatInterval the longest time between two lease extensions of a running owner (one
 * sweep of the heartbeat thread's duration aside); at most half the lease
 * @param clockSkew how far in the future a key's timestamp may be
 * @param keyAgePolicy reject or only warn about keys outside their time window
 * @param inFlightWait how long a duplicate waits for the first request to finish
 * @param inFlightPollInterval how often a waiting duplicate looks at the store
 * @param inFlightStatus the status for a duplicate still in flight after the wait
 * @param inFlightRetryAfter Retry-After with an in-flight answer
 * @param failureMode what to do when the store fails
 * @param storeRetryAfter Retry-After when the store is unavailable
 * @param maxBodyBytes largest response body stored
 */
public record IdempotencySettings(Duration lifetime, Duration grace, Duration lease, Duration heartbeatInterval,
		Duration clockSkew, KeyAgePolicy keyAgePolicy, Duration inFlightWait, Duration inFlightPollInterval,
		InFlightStatus inFlightStatus, Duration inFlightRetryAfter, FailureMode failureMode, Duration storeRetryAfter,
		long maxBodyBytes) {

	public IdempotencySettings {
		requirePositive(lifetime, "lifetime");
		requireNotNegative(grace, "grace");
		requirePositive(lease, "lease");
		requirePositive(heartbeatInterval, "heartbeat-interval");
		if (heartbeatInterval.multipliedBy(2).compareTo(lease) > 0) {
			throw new IllegalArgumentException("idempotency.heartbeat-interval (" + heartbeatInterval
					+ ") must be at most half of idempotency.lease (" + lease + "): a running owner's beats are up to"
					+ " one heartbeat-interval apart, and the rest of the lease is the margin for the store round trip"
					+ " and a late heartbeat thread; set heartbeat-interval to at most " + lease.dividedBy(2)
					+ " or lease to at least " + heartbeatInterval.multipliedBy(2));
		}
		if (lease.compareTo(lifetime.plus(grace)) > 0) {
			throw new IllegalArgumentException(
					"idempotency.lease (" + lease + ") must not be longer than lifetime + grace");
		}
		requireNotNegative(clockSkew, "clock-skew");
		requireNotNegative(inFlightWait, "in-flight.wait");
		requirePositive(inFlightPollInterval, "in-flight.poll-interval");
		requireNotNegative(inFlightRetryAfter, "in-flight.retry-after");
		requireNotNegative(storeRetryAfter, "store.retry-after");
		Objects.requireNonNull(keyAgePolicy, "keyAgePolicy");
		Objects.requireNonNull(inFlightStatus, "inFlightStatus");
		Objects.requireNonNull(failureMode, "failureMode");
		if (maxBodyBytes < 0) {
			throw new IllegalArgumentException("idempotency.response.max-body-size must not be negative");
		}
	}

	/** Defaults: lifetime 30 minutes, grace 5 minutes, lease 30 seconds. */
	public static IdempotencySettings defaults() {
		return new IdempotencySettings(Duration.ofMinutes(30), Duration.ofMinutes(5), Duration.ofSeconds(30),
				Duration.ofSeconds(10), Duration.ofMinutes(1), KeyAgePolicy.REJECT, Duration.ofSeconds(2),
				Duration.ofMillis(50), InFlightStatus.CONFLICT, Duration.ofSeconds(1), FailureMode.FAIL_CLOSED,
				Duration.ofSeconds(5), 1024 * 1024);
	}

	/** How long a record is kept: lifetime + grace. */
	public Duration retention() {
		return this.lifetime.plus(this.grace);
	}

	private static void requirePositive(Duration value, String name) {
		if (value == null || value.isNegative() || value.isZero()) {
			throw new IllegalArgumentException("idempotency." + name + " must be positive, was " + value);
		}
	}

	private static void requireNotNegative(Duration value, String name) {
		if (value == null || value.isNegative()) {
			throw new IllegalArgumentException("idempotency." + name + " must not be negative, was " + value);
		}
	}

	/** What to do with a key whose timestamp is outside its window. */
	public enum KeyAgePolicy {

		/** Answer 400: a key past its window could re-run an operation whose record was purged. */
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

}
