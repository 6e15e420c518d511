/**
 * The Idempotency-Key protocol, independent of HTTP and of any store: the engine, its
 * settings, decisions, errors and listener.
 */
@NullMarked
package dev.idempotency.engine;

import org.jspecify.annotations.NullMarked;
