package dev.idempotency.web.atomic;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.stream.Stream;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.autoconfigure.jdbc.JdbcStoreTestSupport;
import dev.idempotency.test.TestKeys;
import dev.idempotency.test.servers.JdbcTestDatabase;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DelegatingDataSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What one protected request costs the database, counted at the JDBC API of the
 * application's {@code DataSource} (which the store shares: atomic completion, the
 * default there): connections taken from the pool, statements run, commits and rollbacks,
 * and the connection settings changed. Held to the protocol's minimum for a handler that
 * inserts one row:
 * <ul>
 * <li>lease: reserve (an insert, committed alone so that other nodes see it), then the
 * business insert and the completion in one transaction: 3 statements, 1 commit, 2
 * connections;
 * <li>record-after-success: the look-up, then the business insert and the record's insert
 * in one transaction: 3 statements, 1 commit;
 * <li>a replay: one statement, no commit, no transaction; on MariaDB in lease mode two
 * (the reservation's insert, refused by the key, and a read of the row: MariaDB has no
 * insert that answers with the row it conflicts with).
 * </ul>
 * On PostgreSQL the round trips are counted too, as the driver sends them (its
 * {@code Sync} messages): the handler's transaction adds none of its own, since the
 * driver sends {@code BEGIN} with the transaction's first statement and the store sends
 * {@code COMMIT} with the completion, its last write (the connection's {@code commit()}
 * then has nothing to send; 4 round trips before); a handler that writes nothing leaves
 * that transaction empty, and the completion then runs alone in auto-commit (2 round
 * trips in all), where inside the transaction it would have cost the commit's round trip
 * as well. A lease's reservation, which an atomic completion follows, is the variant that
 * commits without waiting for its WAL flush (the default
 * {@code reserve-asynchronous-commit=with-atomic-completion}). Each count is per request,
 * the mean of {@link #REQUESTS} sequential requests after a warm-up.
 */
class StatementsPerRequestTests {

	private static final int REQUESTS = 50;

	private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	static Stream<Arguments> cases() {
		List<Arguments> cases = new ArrayList<>();
		for (String server : List.of("postgresql", "mariadb")) {
			cases.add(Arguments.of(server, "lease"));
			cases.add(Arguments.of(server, "record-after-success"));
		}
		return cases.stream();
	}

	@ParameterizedTest(name = "{0} {1}")
	@MethodSource("cases")
	void aProtectedRequestCostsTheProtocolsMinimum(String server, String mode) throws Exception {
		Map<String, Map<String, Double>> counted = count(server, mode, "/things");
		Map<String, Double> fresh = counted.get("fresh");
		Map<String, Double> replayed = counted.get("replay");
		assertThat(fresh.get("statements")).as("statements of a fresh key").isEqualTo(3.0);
		assertThat(fresh.get("commit")).as("commits of a fresh key").isEqualTo(1.0);
		assertThat(fresh.getOrDefault("rollback", 0.0)).isZero();
		assertThat(fresh.get("connections"))
			.as("connections of a fresh key: the look-up or reservation, the" + " handler's transaction")
			.isEqualTo(2.0);
		assertThat(fresh.get("setAutoCommit(false)")).as("transactions of a fresh key").isEqualTo(1.0);
		assertThat(replayed.getOrDefault("setAutoCommit(false)", 0.0)).as("transactions of a replay").isZero();
		assertThat(replayed.get("statements")).as("statements of a replay")
			.isEqualTo(("mariadb".equals(server) && "lease".equals(mode)) ? 2.0 : 1.0);
		assertThat(replayed.getOrDefault("commit", 0.0)).as("commits of a replay").isZero();
		assertThat(replayed.getOrDefault("rollback", 0.0)).as("rollbacks of a replay").isZero();
		if ("postgresql".equals(server)) {
			assertThat(fresh.get("round trips"))
				.as("round trips of a fresh key: the look-up or reservation, the business insert with BEGIN,"
						+ " the completion with COMMIT")
				.isEqualTo(3.0);
			assertThat(replayed.get("round trips")).as("round trips of a replay").isEqualTo(1.0);
			assertThat(fresh.getOrDefault("asynchronous commit statements", 0.0))
				.as("a lease's reservation commits asynchronously, since an atomic completion follows it; nothing"
						+ " else does")
				.isEqualTo("lease".equals(mode) ? 1.0 : 0.0);
		}
	}

	static Stream<Arguments> modes() {
		return Stream.of(Arguments.of("lease"), Arguments.of("record-after-success"));
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("modes")
	void aHandlerThatWritesNothingCostsTwoRoundTripsOnPostgresql(String mode) throws Exception {
		Map<String, Map<String, Double>> counted = count("postgresql", mode, "/things/echo");
		Map<String, Double> fresh = counted.get("fresh");
		Map<String, Double> replayed = counted.get("replay");
		assertThat(fresh.get("statements")).as("statements of a fresh key: reservation or look-up, completion")
			.isEqualTo(2.0);
		assertThat(fresh.get("round trips")).as("round trips of a fresh key: no BEGIN and no COMMIT of its own")
			.isEqualTo(2.0);
		assertThat(fresh.getOrDefault("rollback", 0.0)).isZero();
		assertThat(replayed.get("round trips")).as("round trips of a replay").isEqualTo(1.0);
		assertThat(fresh.getOrDefault("asynchronous commit statements", 0.0))
			.as("a lease's reservation commits asynchronously, since an atomic completion follows it")
			.isEqualTo("lease".equals(mode) ? 1.0 : 0.0);
	}

	/**
	 * Counts per request over {@link #REQUESTS} fresh keys, then over their replays, each
	 * of which must be a replay: a completion that did not commit would run the handler
	 * again instead.
	 */
	private Map<String, Map<String, Double>> count(String server, String mode, String path) throws Exception {
		JdbcTestDatabase database = ("postgresql".equals(server) ? JdbcTestDatabase.postgres()
				: JdbcTestDatabase.mariadb())
			.create();
		try (HikariDataSource admin = database.dataSource(2)) {
			JdbcStoreTestSupport.createSchema(admin, "idempotency_record");
			JdbcClient.create(admin)
				.sql("CREATE TABLE thing (run VARCHAR(36) PRIMARY KEY, idem_key VARCHAR(64) NOT NULL,"
						+ " body VARCHAR(200) NOT NULL, node VARCHAR(40) NOT NULL)")
				.update();
			Counts counts = new Counts();
			try (ConfigurableApplicationContext node = start(database, mode, counts);
					RoundTrips roundTrips = RoundTrips.countInto(counts)) {
				URI uri = URI.create("http://127.0.0.1:" + node.getEnvironment().getProperty("local.server.port"));
				List<String> keys = new ArrayList<>();
				for (int i = 0; i < 20; i++) {
					String key = TestKeys.newKey();
					assertThat(post(uri, path, key).statusCode()).isEqualTo(201);
					assertThat(post(uri, path, key).statusCode()).isEqualTo(201);
				}
				counts.reset();
				for (int i = 0; i < REQUESTS; i++) {
					String key = TestKeys.newKey();
					HttpResponse<String> first = post(uri, path, key);
					assertThat(first.statusCode()).as(first.body()).isEqualTo(201);
					assertThat(first.headers().firstValue("Idempotent-Replayed")).isEmpty();
					keys.add(key);
				}
				Map<String, Double> fresh = counts.perRequest(REQUESTS);
				counts.reset();
				for (String key : keys) {
					HttpResponse<String> replay = post(uri, path, key);
					assertThat(replay.headers().firstValue("Idempotent-Replayed")).hasValue("true");
				}
				Map<String, Double> replayed = counts.perRequest(REQUESTS);
				System.out.printf(Locale.ROOT, "[statements] %s %s %s: fresh key %s; replay %s%n", server, mode, path,
						fresh, replayed);
				return Map.of("fresh", fresh, "replay", replayed);
			}
		}
		finally {
			database.drop();
		}
	}

	private HttpResponse<String> post(URI node, String path, String key) throws Exception {
		return this.http.send(HttpRequest.newBuilder(node.resolve(path))
			.header("Idempotency-Key", key)
			.header("Content-Type", "text/plain")
			.timeout(Duration.ofSeconds(30))
			.POST(HttpRequest.BodyPublishers.ofString("a thing"))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

	private ConfigurableApplicationContext start(JdbcTestDatabase database, String mode, Counts counts) {
		String name = database.name() + "-count";
		return new SpringApplicationBuilder(AtomicTestApplication.class).registerShutdownHook(false)
			.initializers((context) -> context.getBeanFactory().addBeanPostProcessor(new BeanPostProcessor() {

				@Override
				public Object postProcessAfterInitialization(Object bean, String beanName) {
					return (bean instanceof DataSource dataSource && "dataSource".equals(beanName))
							? new CountingDataSource(dataSource, counts) : bean;
				}

			}))
			.run("--spring.datasource.url=" + database.url(), "--spring.datasource.username=" + database.user(),
					"--spring.datasource.password=", "--spring.datasource.hikari.pool-name=" + name,
					"--spring.datasource.hikari.maximum-pool-size=1", "--atomic.node-name=" + name,
					"--idempotency.mode=" + mode, "--idempotency.store.type=jdbc",
					"--idempotency.store.jdbc.initialize-schema=never", "--idempotency.store.jdbc.purge.enabled=false",
					"--server.port=0", "--spring.main.banner-mode=off", "--spring.jmx.enabled=false");
	}

	/**
	 * Round trips to PostgreSQL as its driver sends them: one {@code Sync} message ends
	 * each (read from the driver's own FINEST log, on for the time of the count). The
	 * pool has one connection, used by every request, so it is never idle long enough for
	 * the pool to validate it (a round trip of its own) before lending it.
	 */
	static final class RoundTrips extends Handler implements AutoCloseable {

		private static final Logger DRIVER = Logger.getLogger("org.postgresql.core.v3.QueryExecutorImpl");

		private final Counts counts;

		private final Level previous;

		private RoundTrips(Counts counts) {
			this.counts = counts;
			this.previous = DRIVER.getLevel();
		}

		static RoundTrips countInto(Counts counts) {
			RoundTrips roundTrips = new RoundTrips(counts);
			DRIVER.addHandler(roundTrips);
			DRIVER.setLevel(Level.FINEST);
			return roundTrips;
		}

		@Override
		public void publish(LogRecord record) {
			String message = record.getMessage();
			// the requests' threads only: not a pool's keep-alive on its own thread
			if (message != null && message.contains("FE=> Sync")
					&& Thread.currentThread().getName().contains("-exec-")) {
				this.counts.count("round trips");
			}
		}

		@Override
		public void flush() {
		}

		@Override
		public void close() {
			DRIVER.setLevel(this.previous);
			DRIVER.removeHandler(this);
		}

	}

	/** Calls counted by name over all connections. */
	static final class Counts {

		private final Map<String, LongAdder> calls = new ConcurrentHashMap<>();

		void count(String call) {
			this.calls.computeIfAbsent(call, (k) -> new LongAdder()).increment();
		}

		void reset() {
			this.calls.clear();
		}

		Map<String, Double> perRequest(int requests) {
			Map<String, Double> result = new TreeMap<>();
			this.calls.forEach((call, count) -> result.put(call, count.sum() / (double) requests));
			return result;
		}

	}

	/** Counts what the application and the store ask of their connections. */
	static final class CountingDataSource extends DelegatingDataSource {

		private final Counts counts;

		CountingDataSource(DataSource target, Counts counts) {
			super(target);
			this.counts = counts;
		}

		@Override
		public Connection getConnection() throws java.sql.SQLException {
			this.counts.count("connections");
			Connection connection = obtainTargetDataSource().getConnection();
			return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] { Connection.class },
					(proxy, method, args) -> {
						String name = method.getName();
						if (name.equals("commit") || name.equals("rollback") || name.startsWith("set")) {
							this.counts.count(name.equals("setAutoCommit") ? name + "(" + args[0] + ")" : name);
						}
						if (name.startsWith("prepare") && args[0] instanceof String sql
								&& sql.contains("'synchronous_commit', 'off'")) {
							this.counts.count("asynchronous commit statements");
						}
						Object result = invoke(connection, method, args);
						if (result instanceof Statement statement) {
							return countingStatement(statement);
						}
						return result;
					});
		}

		private Object countingStatement(Statement statement) {
			List<Class<?>> interfaces = new ArrayList<>();
			for (Class<?> type : List.of(java.sql.CallableStatement.class, java.sql.PreparedStatement.class,
					Statement.class)) {
				if (type.isInstance(statement)) {
					interfaces.add(type);
					break;
				}
			}
			return Proxy.newProxyInstance(getClass().getClassLoader(), interfaces.toArray(Class<?>[]::new),
					(proxy, method, args) -> {
						if (method.getName().startsWith("execute")) {
							this.counts.count("statements");
						}
						return invoke(statement, method, args);
					});
		}

		private static Object invoke(Object target, java.lang.reflect.Method method, Object[] args) throws Throwable {
			try {
				return method.invoke(target, args);
			}
			catch (InvocationTargetException ex) {
				throw ex.getCause();
			}
		}

	}

}
