package dev.idempotency.sample.catalog;

import dev.idempotency.sample.catalog.support.RecordAfterSuccessMode;

/**
 * {@link ScanPlanningTests} on the embedded default in record-after-success mode: the
 * replayed plan and plan task are answers recorded after their success, without a
 * reservation.
 */
@RecordAfterSuccessMode
class ScanPlanningRecordAfterSuccessTests extends ScanPlanningTests {

}
