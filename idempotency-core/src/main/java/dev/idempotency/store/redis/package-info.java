/**
 * The Redis store, with its Lua scripts in one class.
 */
@NullMarked
package dev.idempotency.store.redis;

import org.jspecify.annotations.NullMarked;
