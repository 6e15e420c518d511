/**
 * Internal: what the store auto-configurations, in their own packages, hand to the one
 * validator of the idempotency.* properties (the store's timeout and its own property
 * values), and what the validator and the HTTP door's filter both read (the headers never
 * stored). Public only because those are other packages; not supported, and it changes in
 * any release.
 */
@NullMarked
package dev.idempotency.autoconfigure.internal;

import org.jspecify.annotations.NullMarked;
