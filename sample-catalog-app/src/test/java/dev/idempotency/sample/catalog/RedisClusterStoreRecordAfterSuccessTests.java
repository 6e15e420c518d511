package dev.idempotency.sample.catalog;

import dev.idempotency.sample.catalog.support.RecordAfterSuccessMode;

/**
 * {@link RedisClusterStoreEndToEndTests} in record-after-success mode, under a key prefix
 * of its own in the same cluster.
 */
@RecordAfterSuccessMode
class RedisClusterStoreRecordAfterSuccessTests extends RedisClusterStoreEndToEndTests {

}
