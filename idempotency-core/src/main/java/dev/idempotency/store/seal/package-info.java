/**
 * Stored answers sealed against reading, forging and moving, and request fingerprints
 * keyed against guessing: AES-256-GCM and HMAC-SHA256 from the JDK, under keys that
 * {@link dev.idempotency.store.seal.SealingKeys} provides, applied once between the
 * engine and whatever store it uses.
 */
@NullMarked
package dev.idempotency.store.seal;

import org.jspecify.annotations.NullMarked;
