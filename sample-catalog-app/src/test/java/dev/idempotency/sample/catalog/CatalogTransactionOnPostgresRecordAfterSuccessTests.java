package dev.idempotency.sample.catalog;

import dev.idempotency.sample.catalog.support.RecordAfterSuccessMode;

/**
 * {@link CatalogTransactionOnPostgresTests} in record-after-success mode: the record is
 * inserted in the door's transaction, a conflict (409) is not recorded and its retry runs
 * again.
 */
@RecordAfterSuccessMode
class CatalogTransactionOnPostgresRecordAfterSuccessTests extends CatalogTransactionOnPostgresTests {

}
