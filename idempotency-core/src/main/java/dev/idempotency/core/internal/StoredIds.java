package dev.idempotency.core.internal;

import dev.idempotency.core.KeyFormat;
import dev.idempotency.store.RecordId;

/**
 * The record id a key is stored under in a scope: both as they are when short enough,
 * else hashed, so that every store keeps keys and scopes of bounded length.
 */
final class StoredIds {

	private StoredIds() {
	}

	/** The record of a parsed key in a scope. */
	static RecordId of(String scope, IdempotencyKey key) {
		return new RecordId(scope(scope), key(key.value()));
	}

	/** See {@link IdempotencyEngine#storedKey(String, KeyFormat)}. */
	static String key(String raw, KeyFormat format) {
		return key(IdempotencyKey.parse(raw, format).value());
	}

	/**
	 * The scope as stored: as it is up to {@value RecordId#MAX_SCOPE_LENGTH} characters,
	 * else {@code "sha256:"} and the hex of its SHA-256.
	 */
	static String scope(String scope) {
		return (scope.length() <= RecordId.MAX_SCOPE_LENGTH) ? scope : "sha256:" + Fingerprints.sha256Hex(scope);
	}

	/**
	 * The key as stored: as it is up to {@value RecordId#MAX_KEY_LENGTH} characters
	 * (every UUID, most opaque keys), else {@code "sha256 "} and the first 56 hex digits
	 * of its SHA-256 (63 characters). The space keeps a hashed key apart from every key a
	 * client can send (visible ASCII only), and stores keep their key column as it was.
	 */
	static String key(String key) {
		return (key.length() <= RecordId.MAX_KEY_LENGTH) ? key
				: "sha256 " + Fingerprints.sha256Hex(key).substring(0, 56);
	}

}
