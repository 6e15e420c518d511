package dev.idempotency.sample.orders.chaos;

import java.util.List;

/**
 * The starter's settings in a chaos run of the reactive sample, picked with
 * {@code -Dchaos.configuration} (a comma-separated list picks several). Each has the
 * R2DBC store on the orders' {@code ConnectionFactory}, so atomic completion: the WebFlux
 * door runs the handler in a reactive transaction and records its answer in it.
 */
enum OrdersChaosConfiguration {

	/**
	 * The sample as it ships: nothing of the starter's set but the store, so lease mode
	 * with its 30 s lease; a key whose node was killed waits that long for its retry.
	 */
	DEFAULT("default", List.of()),

	/**
	 * Lease mode with a 4 s lease and a heartbeat every second, the catalog run's: keys
	 * of killed nodes are taken over within the run.
	 */
	LEASE("lease",
			List.of("--idempotency.mode=lease", "--idempotency.lease=PT4S", "--idempotency.heartbeat-interval=PT1S")),

	/**
	 * Nothing written before the handler; the record inserted in its transaction, just
	 * before the commit.
	 */
	RECORD_AFTER_SUCCESS("record-after-success", List.of("--idempotency.mode=record-after-success"));

	private final String id;

	private final List<String> nodeArguments;

	OrdersChaosConfiguration(String id, List<String> nodeArguments) {
		this.id = id;
		this.nodeArguments = nodeArguments;
	}

	/** The value of {@code -Dchaos.configuration}. */
	String id() {
		return this.id;
	}

	/** The nodes' settings of the starter, beside those of every run. */
	List<String> nodeArguments() {
		return this.nodeArguments;
	}

	@Override
	public String toString() {
		return this.id;
	}

}
