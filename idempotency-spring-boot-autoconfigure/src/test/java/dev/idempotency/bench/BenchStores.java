package dev.idempotency.bench;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Clock;
import java.time.Duration;
import java.util.Locale;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.autoconfigure.jdbc.JdbcStoreTestSupport;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.jdbc.JdbcIdempotencyStore;
import dev.idempotency.store.memory.InMemoryIdempotencyStore;
import dev.idempotency.store.redis.RedisIdempotencyStore;
import dev.idempotency.test.servers.JdbcTestDatabase;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.ScanOptions;

/**
 * The stores the benchmarks compare, each on its own schema, database or key prefix on
 * the shared servers (PostgreSQL 127.0.0.1:5432, Redis 127.0.0.1:6379), removed again by
 * {@link #close()}. JDBC stores can count what they send: statements and commits (each
 * one network round trip on PostgreSQL, whose driver sends {@code BEGIN} in the same
 * message as the first statement).
 */
final class BenchStores implements AutoCloseable {

	static final Set<String> NAMES = Set.of("memory", "h2", "postgresql", "mariadb", "redis");

	final IdempotencyStore store;

	/** JDBC only: statements executed and commits/rollbacks, counted at the driver. */
	final AtomicLong statements = new AtomicLong();

	final AtomicLong commits = new AtomicLong();

	private JdbcTestDatabase database;

	private HikariDataSource pool;

	private LettuceConnectionFactory redis;

	private String redisPrefix;

	BenchStores(String name, int poolSize) throws Exception {
		this(name, poolSize, true);
	}

	/**
	 * {@code countStatements}: false gives the JDBC store the plain pool, without the
	 * counting proxies.
	 */
	BenchStores(String name, int poolSize, boolean countStatements) throws Exception {
		switch (name.toLowerCase(Locale.ROOT)) {
			// The store's own bounds (100,000 records, 1/16 of the heap), the whole of
			// them for the one scope that drives the load: a run of fresh keys fills it
			// within seconds and then evicts the oldest record per new one, as an
			// application's store does once it has run a while. Unbounded, the records
			// (each holding its encoded response) would fill the heap instead.
			case "memory" -> this.store = InMemoryIdempotencyStore.builder()
				.clock(Clock.systemUTC())
				.maxSharePerScope(1.0)
				.onFull(InMemoryIdempotencyStore.OnFull.EVICT)
				.build();
			case "h2", "postgresql", "mariadb" -> {
				this.database = switch (name) {
					case "h2" -> JdbcTestDatabase.h2();
					case "postgresql" -> JdbcTestDatabase.postgres();
					default -> JdbcTestDatabase.mariadb();
				};
				this.database.create();
				this.pool = this.database.dataSource(poolSize);
				JdbcStoreTestSupport.createSchema(this.pool, "idempotency_record");
				this.store = JdbcIdempotencyStore.builder(countStatements ? counting(this.pool) : this.pool)
					.tableName("idempotency_record")
					.transactionalCompletion(false)
					.queryTimeout(Duration.ZERO)
					.reserveCommit(JdbcIdempotencyStore.ReserveCommit.OFF)
					.build();
			}
			case "redis" -> {
				this.redis = new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", 6379),
						LettuceClientConfiguration.builder().commandTimeout(Duration.ofSeconds(10)).build());
				this.redis.afterPropertiesSet();
				this.redis.start();
				this.redisPrefix = "idem_bench_" + UUID.randomUUID().toString().substring(0, 8) + ":";
				this.store = RedisIdempotencyStore.builder(this.redis, this.redisPrefix).build();
			}
			default -> throw new IllegalArgumentException("unknown store " + name + "; one of " + NAMES);
		}
	}

	/** The schema's relation size for PostgreSQL, {@code null} elsewhere. */
	DataSource dataSource() {
		return this.pool;
	}

	LettuceConnectionFactory redis() {
		return this.redis;
	}

	String redisPrefix() {
		return this.redisPrefix;
	}

	@Override
	public void close() throws Exception {
		if (this.pool != null) {
			this.pool.close();
		}
		if (this.database != null) {
			this.database.drop();
		}
		if (this.redis != null) {
			try (var connection = this.redis.getConnection();
					Cursor<byte[]> keys = connection.keyCommands()
						.scan(ScanOptions.scanOptions().match(this.redisPrefix + "*").count(1000).build())) {
				while (keys.hasNext()) {
					connection.keyCommands().del(keys.next());
				}
			}
			this.redis.destroy();
		}
	}

	private DataSource counting(DataSource target) {
		return proxy(DataSource.class, target, (method, result) -> (result instanceof Connection connection)
				? proxy(Connection.class, connection, this::connectionCall) : result);
	}

	private Object connectionCall(java.lang.reflect.Method method, Object result) {
		if (result instanceof Statement statement) {
			Class<? extends Statement> type = (statement instanceof java.sql.PreparedStatement)
					? java.sql.PreparedStatement.class : Statement.class;
			return proxy(type, statement, (m, r) -> {
				if (m.getName().startsWith("execute")) {
					this.statements.incrementAndGet();
				}
				return r;
			});
		}
		if (method.getName().equals("commit") || method.getName().equals("rollback")) {
			this.commits.incrementAndGet();
		}
		return result;
	}

	interface AfterCall {

		Object after(java.lang.reflect.Method method, Object result);

	}

	@SuppressWarnings("unchecked")
	static <T> T proxy(Class<T> type, Object target, AfterCall after) {
		InvocationHandler handler = (proxy, method, args) -> {
			if (method.getName().equals("unwrap") || method.getName().equals("isWrapperFor")) {
				return method.invoke(target, args);
			}
			try {
				return after.after(method, method.invoke(target, args));
			}
			catch (InvocationTargetException ex) {
				throw ex.getCause();
			}
		};
		return (T) Proxy.newProxyInstance(BenchStores.class.getClassLoader(), new Class<?>[] { type }, handler);
	}

}
