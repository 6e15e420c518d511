@NullMarked
package dev.idempotency.sample.catalog.iceberg;

import org.jspecify.annotations.NullMarked;
