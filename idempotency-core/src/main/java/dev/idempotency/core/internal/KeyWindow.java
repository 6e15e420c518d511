package dev.idempotency.core.internal;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

import dev.idempotency.core.IdempotencySettings;
import org.jspecify.annotations.Nullable;

/**
 * The key-age window of a key that carries its time (a UUIDv7): accepted from up to the
 * clock skew ahead of this node's clock until its lifetime plus grace have passed.
 */
final class KeyWindow {

	private final IdempotencySettings settings;

	private final Clock clock;

	KeyWindow(IdempotencySettings settings, Clock clock) {
		this.settings = settings;
		this.clock = clock;
	}

	/** Why the key is outside its window; {@code null} if it is inside or has no time. */
	@Nullable String problem(IdempotencyKey key) {
		Instant timestamp = key.timestamp();
		if (timestamp == null) {
			return null;
		}
		Instant now = this.clock.instant();
		if (timestamp.isAfter(now.plus(this.settings.clockSkew()))) {
			return "the key's UUIDv7 timestamp " + timestamp + " is in the future (allowed clock skew "
					+ this.settings.clockSkew() + ")";
		}
		if (timestamp.isBefore(now.minus(this.settings.retention()))) {
			return "the key's UUIDv7 timestamp " + timestamp + " is older than its lifetime " + this.settings.lifetime()
					+ " plus grace " + this.settings.grace() + "; use a new key";
		}
		return null;
	}

	/**
	 * How long the record of this key is kept from now. A key is accepted until its
	 * UUIDv7 time plus lifetime and grace; for a key stamped ahead of this node's clock
	 * (by at most the clock skew, also under the warn policy) that is later than now plus
	 * lifetime and grace, so the record is kept that much longer: a retry accepted by the
	 * window always finds it.
	 */
	Duration retentionFor(IdempotencyKey key) {
		Duration retention = this.settings.retention();
		Instant timestamp = key.timestamp();
		if (timestamp == null) {
			return retention;
		}
		Duration ahead = Duration.between(this.clock.instant(), timestamp);
		if (ahead.isNegative()) {
			return retention;
		}
		Duration skew = this.settings.clockSkew();
		return retention.plus((ahead.compareTo(skew) <= 0) ? ahead : skew);
	}

}
