/**
 * The HTTP front door: the Spring MVC interceptor and filter that read the
 * Idempotency-Key header, capture and replay responses, and render errors as problem
 * details.
 */
@NullMarked
package dev.idempotency.web;

import org.jspecify.annotations.NullMarked;
