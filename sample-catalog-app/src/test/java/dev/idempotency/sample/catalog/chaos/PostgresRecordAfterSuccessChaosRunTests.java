package dev.idempotency.sample.catalog.chaos;

import java.util.List;

import org.junit.jupiter.params.provider.Arguments;

/**
 * The chaos run of {@link ChaosRunTests} on PostgreSQL in record-after-success mode: the
 * test suite's short run of that mode, in a class of its own so that it runs beside the
 * other chaos runs in another test JVM. {@code chaos.store} and {@code chaos.mode} select
 * the runs of {@link ChaosRunTests}, not this one; {@code chaos.operations} and the fault
 * rates apply here too.
 */
class PostgresRecordAfterSuccessChaosRunTests extends ChaosRunTests {

	@Override
	List<Arguments> runs() {
		return List.of(Arguments.of(ChaosStore.POSTGRESQL, ChaosMode.RECORD_AFTER_SUCCESS));
	}

}
