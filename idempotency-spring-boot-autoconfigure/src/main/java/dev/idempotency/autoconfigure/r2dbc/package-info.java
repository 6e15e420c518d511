/**
 * Auto-configuration of the R2DBC store and its table.
 */
@NullMarked
package dev.idempotency.autoconfigure.r2dbc;

import org.jspecify.annotations.NullMarked;
