package dev.idempotency.sample.catalog;

import dev.idempotency.sample.catalog.support.RecordAfterSuccessMode;

/**
 * {@link RedisStoreEndToEndTests} in record-after-success mode, in a store of its own.
 */
@RecordAfterSuccessMode
class RedisStoreRecordAfterSuccessTests extends RedisStoreEndToEndTests {

}
