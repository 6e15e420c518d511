package dev.idempotency.sample.catalog;

import dev.idempotency.sample.catalog.support.RecordAfterSuccessMode;

/**
 * {@link LostResponseTests} in record-after-success mode: the first attempt runs with no
 * reservation and records its answer after; the retry finds it and gets it replayed.
 */
@RecordAfterSuccessMode
class LostResponseRecordAfterSuccessTests extends LostResponseTests {

}
