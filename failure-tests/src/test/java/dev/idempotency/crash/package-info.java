/**
 * Crash proofs of atomic completion: a business write and the completion of its
 * idempotency record commit together or not at all, with nodes crashed at the points in
 * between.
 */
@NullMarked
package dev.idempotency.crash;

import org.jspecify.annotations.NullMarked;
