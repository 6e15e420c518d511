/**
 * The {@link dev.idempotency.Idempotent @Idempotent} annotation that marks an operation
 * as safe to retry with an idempotency key.
 */
@NullMarked
package dev.idempotency;

import org.jspecify.annotations.NullMarked;
