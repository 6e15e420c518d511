/**
 * The {@code idempotency} Actuator endpoint: an operator reads the records of the key a
 * client sent (in one scope, or in every scope where the store can find a key so) and
 * removes one.
 */
@NullMarked
package dev.idempotency.actuate;

import org.jspecify.annotations.NullMarked;
