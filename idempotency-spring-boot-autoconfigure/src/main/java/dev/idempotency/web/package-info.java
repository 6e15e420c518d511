/**
 * The HTTP front door: the Spring MVC interceptor and filter that read the
 * Idempotency-Key header, capture and replay responses, and render errors as problem
 * details, with their auto-configuration. Public: the auto-configuration, the scope
 * resolver SPI and its default, the error renderer SPI and the value of
 * {@code idempotency.fingerprint.json}; everything else is package-private.
 */
@NullMarked
package dev.idempotency.web;

import org.jspecify.annotations.NullMarked;
