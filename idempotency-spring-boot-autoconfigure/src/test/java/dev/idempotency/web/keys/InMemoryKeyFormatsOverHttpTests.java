package dev.idempotency.web.keys;

/** {@link KeyFormatsOverHttpTests} on the in-memory store. */
class InMemoryKeyFormatsOverHttpTests extends KeyFormatsOverHttpTests {

}
