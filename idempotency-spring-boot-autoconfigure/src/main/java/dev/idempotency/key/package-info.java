/**
 * The client's idempotency key: parsing and validation of UUIDv7, other RFC 9562 UUID and
 * opaque keys. Internal: the engine parses keys with it (public only because the engine
 * is another package); not part of the supported API (see docs/api.md).
 */
@NullMarked
package dev.idempotency.key;

import org.jspecify.annotations.NullMarked;
