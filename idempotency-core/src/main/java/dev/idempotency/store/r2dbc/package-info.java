/**
 * The R2DBC store: the JDBC store's statements, per database, run through R2DBC without
 * blocking a thread.
 */
@NullMarked
package dev.idempotency.store.r2dbc;

import org.jspecify.annotations.NullMarked;
