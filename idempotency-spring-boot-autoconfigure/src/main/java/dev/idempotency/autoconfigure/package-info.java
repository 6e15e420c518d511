/**
 * Auto-configuration of the engine, the stores, metrics and health, the client side and
 * the endpoint, with the {@code idempotency.*} properties. The two front doors are
 * configured beside their own package-private types ({@code dev.idempotency.web},
 * {@code dev.idempotency.method}).
 */
@NullMarked
package dev.idempotency.autoconfigure;

import org.jspecify.annotations.NullMarked;
