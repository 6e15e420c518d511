/**
 * The supported programmatic API: {@link dev.idempotency.core.IdempotencyTemplate} (run a
 * callback once per key, replay its stored result to every retry) and the values the
 * engine speaks in (settings, key formats, errors, listener, observation context). Every
 * type here carries {@code @since}. The engine itself is in
 * {@code dev.idempotency.core.internal}, which applications must not use; the store SPI
 * is {@code dev.idempotency.store}.
 */
@NullMarked
package dev.idempotency.core;

import org.jspecify.annotations.NullMarked;
