/**
 * The {@code idempotency} Actuator endpoint: an operator reads or removes one record by
 * the key a client sent.
 */
@NullMarked
package dev.idempotency.actuate;

import org.jspecify.annotations.NullMarked;
