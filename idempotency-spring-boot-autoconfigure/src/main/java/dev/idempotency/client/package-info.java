/**
 * The client side: an interceptor for Spring's {@code RestClient} and
 * {@code RestTemplate} and a filter function for {@code WebClient} that send one
 * {@code Idempotency-Key} per logical call and retry that call with the same key, under
 * one rule.
 */
@NullMarked
package dev.idempotency.client;

import org.jspecify.annotations.NullMarked;
