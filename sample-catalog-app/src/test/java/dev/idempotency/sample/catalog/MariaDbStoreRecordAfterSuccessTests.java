package dev.idempotency.sample.catalog;

import dev.idempotency.sample.catalog.support.RecordAfterSuccessMode;

/**
 * {@link MariaDbStoreEndToEndTests} in record-after-success mode, in a store of its own.
 */
@RecordAfterSuccessMode
class MariaDbStoreRecordAfterSuccessTests extends MariaDbStoreEndToEndTests {

}
