@NullMarked
package dev.idempotency.sample.catalog.idempotency;

import org.jspecify.annotations.NullMarked;
