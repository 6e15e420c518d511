/**
 * Internal: what the store auto-configurations, in their own packages, hand to the one
 * validator of the idempotency.* properties (the store's timeout and its own property
 * values). Public only because those auto-configurations are other packages; not
 * supported, and it changes in any release.
 */
@NullMarked
package dev.idempotency.autoconfigure.internal;

import org.jspecify.annotations.NullMarked;
