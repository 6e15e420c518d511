/**
 * The method front door: the interceptor that protects
 * {@link dev.idempotency.Idempotent @Idempotent} bean methods by a SpEL key over their
 * arguments.
 */
@NullMarked
package dev.idempotency.method;

import org.jspecify.annotations.NullMarked;
