package dev.idempotency.core;

import java.util.Arrays;
import java.util.Objects;

import org.jspecify.annotations.Nullable;

/**
 * One call to run once per key with {@link IdempotencyTemplate#execute}: the key, whom it
 * belongs to, the operation, how the key is validated and what makes two calls "the same
 * request".
 *
 * @param scope whom the key belongs to (a tenant, a user, or {@code ""} for one shared
 * key space): the same key in two scopes is two keys
 * @param key the idempotency key as the caller sent it
 * @param operation the operation's name, kept with the record and used in metrics
 * @param keyFormat how the key is validated ({@link KeyFormat#DEFAULT} is
 * {@link KeyFormat#OPAQUE})
 * @param fingerprint the bytes that identify the request (for example its serialized
 * arguments): a later call with the same key and other bytes is refused as
 * {@link IdempotencyErrorType#KEY_REUSED}
 * @since 0.1.0
 */
public record IdempotentRequest(String scope, String key, String operation, KeyFormat keyFormat, byte[] fingerprint) {

	public IdempotentRequest {
		Objects.requireNonNull(scope, "scope");
		Objects.requireNonNull(key, "key");
		Objects.requireNonNull(operation, "operation");
		Objects.requireNonNull(keyFormat, "keyFormat");
		fingerprint = fingerprint.clone();
	}

	/**
	 * A request in the shared scope {@code ""}, its key {@link KeyFormat#OPAQUE}.
	 * @param key the idempotency key
	 * @param operation the operation's name
	 * @param fingerprint the bytes that identify the request
	 * @return the request
	 */
	public static IdempotentRequest of(String key, String operation, byte[] fingerprint) {
		return new IdempotentRequest("", key, operation, KeyFormat.DEFAULT, fingerprint);
	}

	/**
	 * This request in another scope.
	 * @param scope whom the key belongs to
	 * @return the request
	 */
	public IdempotentRequest inScope(String scope) {
		return new IdempotentRequest(scope, this.key, this.operation, this.keyFormat, this.fingerprint);
	}

	/**
	 * This request with its key validated as {@code keyFormat}.
	 * @param keyFormat how the key is validated
	 * @return the request
	 */
	public IdempotentRequest withKeyFormat(KeyFormat keyFormat) {
		return new IdempotentRequest(this.scope, this.key, this.operation, keyFormat, this.fingerprint);
	}

	@Override
	public byte[] fingerprint() {
		return this.fingerprint.clone();
	}

	@Override
	public boolean equals(@Nullable Object other) {
		return other instanceof IdempotentRequest that && this.scope.equals(that.scope) && this.key.equals(that.key)
				&& this.operation.equals(that.operation) && this.keyFormat == that.keyFormat
				&& Arrays.equals(this.fingerprint, that.fingerprint);
	}

	@Override
	public int hashCode() {
		return Objects.hash(this.scope, this.key, this.operation, this.keyFormat, Arrays.hashCode(this.fingerprint));
	}

	@Override
	public String toString() {
		// Never the key itself: it may be a bearer of rights.
		return "IdempotentRequest[scope=" + this.scope + ", operation=" + this.operation + ", keyFormat="
				+ this.keyFormat + "]";
	}

}
