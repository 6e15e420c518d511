package dev.idempotency.resilience;

/** {@link StoreResilienceTests} on the shared Redis at 127.0.0.1:6379. */
class RedisStoreResilienceTests extends StoreResilienceTests {

	@Override
	protected StoreFixture createFixture() {
		return new RedisStoreFixture();
	}

}
