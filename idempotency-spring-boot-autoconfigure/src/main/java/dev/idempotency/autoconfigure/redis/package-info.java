/**
 * Auto-configuration of the Redis store and its connections.
 */
@NullMarked
package dev.idempotency.autoconfigure.redis;

import org.jspecify.annotations.NullMarked;
