/**
 * The JDBC store, with every SQL statement of each supported database in one class per
 * dialect.
 */
@NullMarked
package dev.idempotency.store.jdbc;

import org.jspecify.annotations.NullMarked;
