package dev.idempotency.testing.outside;

/** A value of a class outside the application's packages, as a library's would be. */
public record LibraryValue(String name, int run) {
}
