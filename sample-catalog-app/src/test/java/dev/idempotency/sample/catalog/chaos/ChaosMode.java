package dev.idempotency.sample.catalog.chaos;

/**
 * The starter's mode in a chaos run ({@code idempotency.mode}), picked with
 * {@code -Dchaos.mode} ({@code lease} unless said otherwise; a comma-separated list picks
 * several).
 */
enum ChaosMode {

	/**
	 * The key is reserved (with a lease) before the handler runs; with atomic completion
	 * the reservation commits on its own and the completion rides the catalog's commit.
	 */
	LEASE("lease"),

	/**
	 * Nothing is written before the handler; the record is inserted in the catalog's
	 * transaction, just before its commit (atomic completion), or after the handler
	 * succeeded (Redis).
	 */
	RECORD_AFTER_SUCCESS("record-after-success");

	private final String id;

	ChaosMode(String id) {
		this.id = id;
	}

	/** The value of {@code idempotency.mode} and of {@code -Dchaos.mode}. */
	String id() {
		return this.id;
	}

	@Override
	public String toString() {
		return this.id;
	}

}
