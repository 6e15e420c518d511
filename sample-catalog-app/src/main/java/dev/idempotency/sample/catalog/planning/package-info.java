/**
 * Server-side scan planning: plans kept in the catalog's database, so that every node
 * answers for every plan and a plan lives as long as the catalog's rows do.
 */
@NullMarked
package dev.idempotency.sample.catalog.planning;

import org.jspecify.annotations.NullMarked;
