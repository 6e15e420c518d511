package dev.idempotency.store;

import java.util.Objects;

/**
 * Identifies one idempotency record: the client's key within the scope it belongs to. The
 * same key under another scope (another principal, another catalog prefix) is another
 * record.
 *
 * @param scope who the key belongs to, at most {@value #MAX_SCOPE_LENGTH} characters
 * @param key the client's key in canonical form (a lower-case UUID of 36 characters, or
 * visible ASCII characters), after {@code "method "} for a method call's key (the method
 * door's, the template's); when that is longer than {@value #MAX_KEY_LENGTH} characters,
 * its hash ({@code "sha256 "} and 56 hex digits). A store keeps it as it is
 * @since 0.1.0
 */
public record RecordId(String scope, String key) {

	/** Longest scope a store must hold; the engine hashes longer scopes down to this. */
	public static final int MAX_SCOPE_LENGTH = 200;

	/** Longest key a store must hold. */
	public static final int MAX_KEY_LENGTH = 64;

	public RecordId {
		Objects.requireNonNull(scope, "scope");
		Objects.requireNonNull(key, "key");
		if (scope.length() > MAX_SCOPE_LENGTH) {
			throw new IllegalArgumentException("scope longer than " + MAX_SCOPE_LENGTH + " characters");
		}
		if (key.isEmpty() || key.length() > MAX_KEY_LENGTH) {
			throw new IllegalArgumentException("key must have 1 to " + MAX_KEY_LENGTH + " characters");
		}
	}
}
