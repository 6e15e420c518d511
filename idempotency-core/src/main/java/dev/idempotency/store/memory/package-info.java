/**
 * A store in this JVM's memory, for a single node and for development.
 */
@NullMarked
package dev.idempotency.store.memory;

import org.jspecify.annotations.NullMarked;
