/**
 * WebFlux applications: until the starter has a reactive door, an {@code @Idempotent}
 * handler of a WebFlux application fails the start-up with the handlers it would leave
 * unprotected, instead of being silently ignored. Public: the auto-configuration; the
 * rest is package-private.
 */
@NullMarked
package dev.idempotency.webflux;

import org.jspecify.annotations.NullMarked;
