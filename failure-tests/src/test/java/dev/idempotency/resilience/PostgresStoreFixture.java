package dev.idempotency.resilience;

import java.sql.SQLException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;

import dev.idempotency.test.servers.JdbcTestDatabase;

/**
 * The shared PostgreSQL at 127.0.0.1:5432 (database {@code test}); this run uses a schema
 * of its own.
 */
final class PostgresStoreFixture implements StoreFixture {

	private final JdbcTestDatabase schema;

	PostgresStoreFixture() {
		try {
			this.schema = JdbcTestDatabase.postgres().create();
		}
		catch (SQLException ex) {
			throw new IllegalStateException("cannot create a schema on PostgreSQL at 127.0.0.1:5432", ex);
		}
	}

	@Override
	public int port() {
		return this.schema.port();
	}

	@Override
	public Map<String, String> properties(int port, Duration timeout) {
		long seconds = Math.max(1, timeout.toSeconds());
		Map<String, String> properties = new LinkedHashMap<>();
		properties.put("idempotency.store.type", "jdbc");
		properties.put("idempotency.store.jdbc.initialize-schema", "always");
		// These tests measure the store's own failure windows (lease mode's record left
		// in flight after a cut); the app writes nothing to the database, so atomic
		// completion (the default on the application's DataSource) would only turn those
		// answers into rollbacks. It is tested by the *AtomicCompletionOverHttpTests.
		properties.put("idempotency.store.jdbc.transactional-completion", "false");
		properties.put("spring.datasource.url",
				this.schema.url(port) + "&connectTimeout=" + seconds + "&socketTimeout=" + (seconds + 10));
		properties.put("spring.datasource.username", this.schema.user());
		properties.put("spring.datasource.hikari.connection-timeout", Long.toString(Math.max(250, timeout.toMillis())));
		properties.put("spring.datasource.hikari.validation-timeout",
				Long.toString(Math.max(250, timeout.toMillis() / 2)));
		// The server is shared: a few connections per node are plenty.
		properties.put("spring.datasource.hikari.maximum-pool-size", "6");
		properties.put("spring.datasource.hikari.minimum-idle", "1");
		// No Redis here: keep Boot from building a client.
		properties.put("spring.autoconfigure.exclude",
				"org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration");
		return properties;
	}

	@Override
	public void close() {
		try {
			this.schema.drop();
		}
		catch (SQLException ex) {
			throw new IllegalStateException("cannot drop schema " + this.schema.name(), ex);
		}
	}

	@Override
	public String toString() {
		return "PostgreSQL at 127.0.0.1:" + port() + " in schema " + this.schema.name();
	}

}
