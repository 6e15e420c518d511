package dev.idempotency.resilience;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;

import dev.idempotency.test.servers.SharedRedis;

/**
 * The shared Redis at 127.0.0.1:6379; this run writes under
 * {@code idem-hardening-<uuid>:} only.
 */
final class RedisStoreFixture implements StoreFixture {

	private static final int PORT = 6379;

	private final String prefix = "idem-hardening-" + UUID.randomUUID() + ":";

	@Override
	public int port() {
		return PORT;
	}

	@Override
	public Map<String, String> properties(int port, Duration timeout) {
		Map<String, String> properties = new LinkedHashMap<>();
		properties.put("idempotency.store.type", "redis");
		properties.put("idempotency.store.redis.key-prefix", this.prefix);
		properties.put("spring.data.redis.host", "127.0.0.1");
		properties.put("spring.data.redis.port", Integer.toString(port));
		properties.put("spring.data.redis.timeout", timeout.toMillis() + "ms");
		properties.put("spring.data.redis.connect-timeout", timeout.toMillis() + "ms");
		// No database here: keep Boot from building an embedded one.
		properties.put("spring.autoconfigure.exclude",
				"org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration");
		return properties;
	}

	@Override
	public void close() {
		SharedRedis.deleteKeys(this.prefix);
	}

	@Override
	public String toString() {
		return "Redis at 127.0.0.1:" + PORT + " under " + this.prefix;
	}

}
