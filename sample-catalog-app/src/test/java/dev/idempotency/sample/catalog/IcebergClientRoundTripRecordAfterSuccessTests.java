package dev.idempotency.sample.catalog;

import dev.idempotency.sample.catalog.support.RecordAfterSuccessMode;

/**
 * {@link IcebergClientRoundTripTests} on the in-memory store in record-after-success
 * mode.
 */
@RecordAfterSuccessMode
class IcebergClientRoundTripRecordAfterSuccessTests extends IcebergClientRoundTripTests {

}
