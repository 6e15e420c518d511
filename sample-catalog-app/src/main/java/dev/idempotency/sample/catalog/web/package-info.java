@NullMarked
package dev.idempotency.sample.catalog.web;

import org.jspecify.annotations.NullMarked;
