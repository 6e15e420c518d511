@NullMarked
package dev.idempotency.sample.catalog.security;

import org.jspecify.annotations.NullMarked;
