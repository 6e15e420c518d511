/**
 * The client side: an interceptor for Spring's {@code RestClient} and
 * {@code RestTemplate} that sends one {@code Idempotency-Key} per logical call and
 * retries that call with the same key.
 */
@NullMarked
package dev.idempotency.client;

import org.jspecify.annotations.NullMarked;
