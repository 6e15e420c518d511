package dev.idempotency.resilience;

/**
 * {@link StoreResilienceTests} on the shared PostgreSQL at 127.0.0.1:5432, in a schema of
 * its own.
 */
class PostgresStoreResilienceTests extends StoreResilienceTests {

	@Override
	protected StoreFixture createFixture() {
		return new PostgresStoreFixture();
	}

}
