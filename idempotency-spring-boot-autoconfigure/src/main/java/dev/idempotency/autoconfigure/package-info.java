/**
 * Auto-configuration of the engine, the web and method front doors, metrics and health,
 * with the {@code idempotency.*} properties.
 */
@NullMarked
package dev.idempotency.autoconfigure;

import org.jspecify.annotations.NullMarked;
