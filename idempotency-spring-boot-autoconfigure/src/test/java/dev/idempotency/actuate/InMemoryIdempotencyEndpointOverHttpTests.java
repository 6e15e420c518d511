package dev.idempotency.actuate;

/** {@link IdempotencyEndpointOverHttpTests} on the in-memory store. */
class InMemoryIdempotencyEndpointOverHttpTests extends IdempotencyEndpointOverHttpTests {

}
