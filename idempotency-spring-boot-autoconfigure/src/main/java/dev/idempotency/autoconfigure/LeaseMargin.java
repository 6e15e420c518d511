package dev.idempotency.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.idempotency.core.IdempotencySettings;
import org.jspecify.annotations.Nullable;

/**
 * The start-up check that a running owner's lease outlives the gap between two of its
 * heartbeats, whatever the store. The next beat of an owner starts at most one
 * {@code heartbeat-interval} after its last one began (the lease counts from about then);
 * it can be late by one sweep of the heartbeat thread (a quarter interval) and by a pause
 * of the JVM or the machine; and it reaches the store at the latest when the store's own
 * timeout ends (JDBC {@code query-timeout}, Redis {@code command-timeout}; the in-memory
 * store has none). So:
 * {@code heartbeat-interval + store timeout + heartbeat-interval / 4 + 500 ms < lease},
 * and {@code lease >= 1 s}. A shorter lease ends while its owner still runs, and a retry
 * takes the key over and runs the operation beside it. Checked in lease mode only (the
 * other mode holds no lease). Each store's auto-configuration checks with its own
 * timeout; the core auto-configuration checks without one, for every store.
 * <p>
 * Internal: public because the store auto-configurations, in sub-packages, call it; not
 * part of the supported API (see docs/api.md).
 *
 * @since 0.1.0
 */
public final class LeaseMargin {

	/**
	 * What a GC or scheduling pause may take from the margin: G1's pause target is 200 ms
	 * and a loaded machine delays a thread's wake-up too; a pause longer than this is a
	 * fault of its own, which a lease cannot hide.
	 */
	public static final Duration PAUSE_ALLOWANCE = Duration.ofMillis(500);

	/** The shortest lease accepted. */
	public static final Duration MINIMUM_LEASE = Duration.ofSeconds(1);

	private static final IdempotencySettings.Lease DEFAULT_LEASE = IdempotencySettings.defaults().lease();

	private LeaseMargin() {
	}

	/**
	 * Throws {@link InvalidIdempotencySettingsException} when the lease does not cover
	 * the heartbeat gap.
	 * @param settings the engine's settings
	 * @param storeTimeout the longest one store call may take, {@code null} when the
	 * store has none or it is not known
	 * @param storeTimeoutProperty the property that sets it, such as
	 * {@code idempotency.store.jdbc.query-timeout}
	 */
	public static void check(IdempotencySettings settings, @Nullable Duration storeTimeout,
			@Nullable String storeTimeoutProperty) {
		if (settings.mode() != IdempotencySettings.Mode.LEASE) {
			return;
		}
		Duration lease = settings.lease().duration();
		Duration interval = settings.lease().heartbeatInterval();
		if (lease.compareTo(MINIMUM_LEASE) < 0) {
			throw new InvalidIdempotencySettingsException(
					List.of("idempotency.lease", "idempotency.heartbeat-interval"),
					"idempotency.lease (" + lease + ") must be at least " + MINIMUM_LEASE
							+ ": a shorter lease ends while its owner still runs (a store call, a GC pause or a"
							+ " busy machine delays a heartbeat by more), and a retry then runs the operation"
							+ " beside it",
					"Set idempotency.lease to at least " + MINIMUM_LEASE + " (the default is "
							+ PropertyValues.written(DEFAULT_LEASE.duration()) + ", with a heartbeat-interval of "
							+ PropertyValues.written(DEFAULT_LEASE.heartbeatInterval()) + ").");
		}
		Duration sweep = interval.dividedBy(4);
		Duration store = (storeTimeout != null) ? storeTimeout : Duration.ZERO;
		Duration needed = interval.plus(store).plus(sweep).plus(PAUSE_ALLOWANCE);
		if (needed.compareTo(lease) >= 0) {
			List<String> properties = new ArrayList<>(List.of("idempotency.lease", "idempotency.heartbeat-interval"));
			String storePart = "";
			if (storeTimeoutProperty != null && storeTimeout != null) {
				properties.add(storeTimeoutProperty);
				storePart = " + the store's timeout " + storeTimeoutProperty + " (" + storeTimeout + ")";
			}
			throw new InvalidIdempotencySettingsException(properties,
					"idempotency.lease (" + lease + ") must be longer than idempotency.heartbeat-interval (" + interval
							+ ")" + storePart + " + one heartbeat sweep (a quarter interval, " + sweep
							+ ") + a pause allowance (" + PAUSE_ALLOWANCE + ") = " + needed
							+ ": an owner's next heartbeat starts up to one interval after its last, late by a sweep"
							+ " and a GC or scheduling pause, and reaches the store at the latest when the store's"
							+ " timeout ends; a lease that ends first lets a retry take over an owner that is still"
							+ " running",
					"Set idempotency.lease to more than " + needed + ", or lower idempotency.heartbeat-interval"
							+ ((storeTimeoutProperty != null) ? " or " + storeTimeoutProperty : "") + ".");
		}
	}

}
