package dev.idempotency.web;

/** {@link VirtualThreadsOverHttpTests} on the in-memory store. */
class InMemoryVirtualThreadsOverHttpTests extends VirtualThreadsOverHttpTests {

}
