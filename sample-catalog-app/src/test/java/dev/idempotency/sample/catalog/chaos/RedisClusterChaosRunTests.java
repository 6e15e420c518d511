package dev.idempotency.sample.catalog.chaos;

import java.util.List;

import org.junit.jupiter.params.provider.Arguments;

/**
 * The chaos run of {@link ChaosRunTests} on a Redis Cluster of the run's own, in lease
 * mode: the test suite's short run of that store, in a class of its own so that it runs
 * beside the PostgreSQL runs in another test JVM. {@code chaos.store} and
 * {@code chaos.mode} select the runs of {@link ChaosRunTests}, not this one;
 * {@code chaos.operations} and the fault rates apply here too.
 */
class RedisClusterChaosRunTests extends ChaosRunTests {

	@Override
	List<Arguments> runs() {
		return List.of(Arguments.of(ChaosStore.REDIS_CLUSTER, ChaosMode.LEASE));
	}

}
