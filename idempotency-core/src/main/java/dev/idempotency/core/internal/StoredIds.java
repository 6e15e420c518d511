package dev.idempotency.core.internal;

import dev.idempotency.core.KeyFormat;
import dev.idempotency.store.RecordId;

/**
 * The record id a key is stored under in a scope: both as they are when short enough,
 * else hashed, so that every store keeps keys and scopes of bounded length. The keys of
 * the two kinds of doors are kept apart: the HTTP door's as they are, a method call's
 * (the method door's, the template's) after the door's name and a space, so that a
 * handler that passes its own {@code Idempotency-Key} to a keyed method never finds its
 * own request's record there.
 */
final class StoredIds {

	private StoredIds() {
	}

	/** The record of a parsed key in a scope, for a call of a door. */
	static RecordId of(String scope, IdempotencyKey key, IdempotentCall.Door door) {
		return of(scope, key.value(), door);
	}

	/** See {@link IdempotencyEngine#recordId(String, String, IdempotentCall.Door)}. */
	static RecordId of(String scope, String canonicalKey, IdempotentCall.Door door) {
		return new RecordId(scope(scope), key(door, canonicalKey));
	}

	/**
	 * See {@link IdempotencyEngine#storedKey(String, KeyFormat, IdempotentCall.Door)}.
	 */
	static String key(String raw, KeyFormat format, IdempotentCall.Door door) {
		return key(door, IdempotencyKey.parse(raw, format).value());
	}

	/**
	 * The scope as stored: as it is up to {@value RecordId#MAX_SCOPE_LENGTH} characters,
	 * else {@code "sha256:"} and the hex of its SHA-256.
	 */
	static String scope(String scope) {
		return (scope.length() <= RecordId.MAX_SCOPE_LENGTH) ? scope : "sha256:" + Fingerprints.sha256Hex(scope);
	}

	/**
	 * The key of a door as stored: the HTTP door's as it is, a method call's as
	 * {@code "method "} and the key (a client's key has no space), each then as
	 * {@link #key(String)} stores it.
	 */
	static String key(IdempotentCall.Door door, String key) {
		return key((door == IdempotentCall.Door.HTTP) ? key : door.tag() + " " + key);
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
