/**
 * Internal: the Idempotency-Key protocol as the starter's doors call it (the engine, its
 * decisions and reservations, key parsing, fingerprints), independent of HTTP and of any
 * store. Public only because the doors and the auto-configuration are other packages; not
 * supported, and it changes in any release. Applications use
 * {@link dev.idempotency.core.IdempotencyTemplate}, {@code @Idempotent} or the HTTP door.
 */
@NullMarked
package dev.idempotency.core.internal;

import org.jspecify.annotations.NullMarked;
