/**
 * The Idempotency-Key protocol, independent of HTTP and of any store: the engine, its
 * settings, decisions, errors and listener.
 */
@NullMarked
package dev.idempotency.core.internal;

import org.jspecify.annotations.NullMarked;
