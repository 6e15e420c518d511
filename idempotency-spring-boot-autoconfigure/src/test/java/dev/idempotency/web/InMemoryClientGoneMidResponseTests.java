package dev.idempotency.web;

/** {@link ClientGoneMidResponseTests} on the in-memory store. */
class InMemoryClientGoneMidResponseTests extends ClientGoneMidResponseTests {

}
