/**
 * The client's idempotency key: parsing and validation of UUIDv7, other RFC 9562 UUID and
 * opaque keys.
 */
@NullMarked
package dev.idempotency.key;

import org.jspecify.annotations.NullMarked;
