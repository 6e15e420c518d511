package dev.idempotency.sample.catalog;

import dev.idempotency.sample.catalog.support.RecordAfterSuccessMode;

/**
 * {@link LostResponseOnPostgresTests} in record-after-success mode, in a schema of its
 * own.
 */
@RecordAfterSuccessMode
class LostResponseOnPostgresRecordAfterSuccessTests extends LostResponseOnPostgresTests {

}
