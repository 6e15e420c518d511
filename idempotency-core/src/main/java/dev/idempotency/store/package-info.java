/**
 * The store SPI beneath the engine: records, reservations, stored responses and their
 * codec.
 */
@NullMarked
package dev.idempotency.store;

import org.jspecify.annotations.NullMarked;
