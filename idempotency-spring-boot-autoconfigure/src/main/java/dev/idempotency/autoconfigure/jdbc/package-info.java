/**
 * Auto-configuration of the JDBC store: its data source, schema set-up, table check and
 * purge of expired records.
 */
@NullMarked
package dev.idempotency.autoconfigure.jdbc;

import org.jspecify.annotations.NullMarked;
