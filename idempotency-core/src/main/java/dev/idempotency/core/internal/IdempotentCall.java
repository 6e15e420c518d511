package dev.idempotency.core.internal;

import java.util.List;
import java.util.Objects;
import java.util.function.Supplier;

import dev.idempotency.core.KeyFormat;

/**
 * One protected call as a front door presents it to the engine.
 *
 * @param scope whom the key belongs to
 * @param keyValues the key as received: empty when absent; more than one value is an
 * error
 * @param keyFormat how the key is validated (not {@link KeyFormat#DEFAULT}: the door
 * resolves it)
 * @param keyRequired whether a missing key is an error
 * @param operation the operation's name
 * @param fingerprint computes the request's fingerprint (only called when a key is
 * present)
 * @param earlierFingerprints computes the fingerprints the same request had under an
 * earlier fingerprint format (or another fingerprint setting): a record holding one of
 * them was made by the same request, so that records made before an upgrade still replay.
 * Called only when a record's fingerprint differs from {@code fingerprint}.
 * @param door the front door that makes the call (the {@code idempotency.door} of its
 * observation)
 * @since 0.1.0
 */
public record IdempotentCall(String scope, List<String> keyValues, KeyFormat keyFormat, boolean keyRequired,
		String operation, Supplier<String> fingerprint, Supplier<List<String>> earlierFingerprints, Door door) {

	public IdempotentCall {
		Objects.requireNonNull(scope, "scope");
		keyValues = List.copyOf(keyValues);
		Objects.requireNonNull(keyFormat, "keyFormat");
		if (keyFormat == KeyFormat.DEFAULT) {
			throw new IllegalArgumentException("keyFormat: the door resolves DEFAULT to a format");
		}
		Objects.requireNonNull(operation, "operation");
		Objects.requireNonNull(fingerprint, "fingerprint");
		Objects.requireNonNull(earlierFingerprints, "earlierFingerprints");
		Objects.requireNonNull(door, "door");
	}

	/** A call of the HTTP door. */
	public IdempotentCall(String scope, List<String> keyValues, KeyFormat keyFormat, boolean keyRequired,
			String operation, Supplier<String> fingerprint, Supplier<List<String>> earlierFingerprints) {
		this(scope, keyValues, keyFormat, keyRequired, operation, fingerprint, earlierFingerprints, Door.HTTP);
	}

	/** A call of the HTTP door whose fingerprint has no earlier format. */
	public IdempotentCall(String scope, List<String> keyValues, KeyFormat keyFormat, boolean keyRequired,
			String operation, Supplier<String> fingerprint) {
		this(scope, keyValues, keyFormat, keyRequired, operation, fingerprint, List::of, Door.HTTP);
	}

	/**
	 * The same call with other fingerprints: the engine's keyed ones, see
	 * {@link IdempotencyEngine}.
	 * @param fingerprint computes the fingerprint the record keeps
	 * @param earlierFingerprints computes the fingerprints a record of the same request
	 * may keep
	 * @return the call
	 */
	IdempotentCall withFingerprints(Supplier<String> fingerprint, Supplier<List<String>> earlierFingerprints) {
		return new IdempotentCall(this.scope, this.keyValues, this.keyFormat, this.keyRequired, this.operation,
				fingerprint, earlierFingerprints, this.door);
	}

	/**
	 * The front door that makes a call. The keys of each door are kept apart in the store
	 * (see {@link IdempotencyEngine#recordId}).
	 */
	public enum Door {

		/** The {@code Idempotency-Key} header on an HTTP request. */
		HTTP("http"),

		/**
		 * An {@code @Idempotent} bean method with a key expression, or the
		 * {@code IdempotencyTemplate}.
		 */
		METHOD("method");

		private final String tag;

		Door(String tag) {
			this.tag = tag;
		}

		/**
		 * The value of the observation's {@code idempotency.door}, and what a stored key
		 * of a door other than {@code HTTP} starts with.
		 */
		public String tag() {
			return this.tag;
		}

	}

}
