@NullMarked
package dev.idempotency.sample.catalog;

import org.jspecify.annotations.NullMarked;
