package dev.idempotency.sample.catalog;

import dev.idempotency.sample.catalog.support.RecordAfterSuccessMode;

/**
 * {@link IcebergClientRoundTripTests} on the embedded default (the JDBC store on the
 * catalog's H2 database) in record-after-success mode.
 */
@RecordAfterSuccessMode
class IcebergClientRoundTripRecordAfterSuccessTests extends IcebergClientRoundTripTests {

}
