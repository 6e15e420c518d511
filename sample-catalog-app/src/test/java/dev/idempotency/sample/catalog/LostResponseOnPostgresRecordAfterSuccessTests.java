package dev.idempotency.sample.catalog;

import dev.idempotency.sample.catalog.support.RecordAfterSuccessMode;

/**
 * {@link LostResponseOnPostgresTests} in record-after-success mode, in a database of its
 * own.
 */
@RecordAfterSuccessMode
class LostResponseOnPostgresRecordAfterSuccessTests extends LostResponseOnPostgresTests {

}
