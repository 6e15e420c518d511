package dev.idempotency.crash;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;

import dev.idempotency.Idempotent;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ComponentScan.Filter;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.FilterType;
import org.springframework.data.annotation.Id;
import org.springframework.data.jdbc.repository.config.AbstractJdbcConfiguration;
import org.springframework.data.jdbc.repository.config.EnableJdbcRepositories;
import org.springframework.data.relational.core.mapping.Table;
import org.springframework.data.repository.CrudRepository;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;

/**
 * One node of the crash proofs: {@code POST /orders} places an order in one transaction
 * that saves it with a Spring Data JDBC repository and moves the ledger, on the same
 * PostgreSQL {@code DataSource} as the idempotency records.
 * <p>
 * The transaction is opened by {@link Checkout#place} ({@code @Transactional}) around the
 * call of {@link Orders#place}, which the method door protects with the request's
 * {@code Idempotency-Key} header as its key. The method door runs outside any transaction
 * of its own bean, so here its completion of the record runs inside the transaction
 * opened further out and, with
 * {@code idempotency.store.jdbc.transactional-completion=true}, commits with the order or
 * not at all. The node crashes where the test armed its {@link CrashSwitch}.
 * <p>
 * The method door replays the method's result, not an HTTP response, so this controller
 * says itself whether the answer is a replay: {@code Idempotent-Replayed: true} when
 * {@link Orders#place} did not run in this request.
 */
@SpringBootConfiguration
// The store's table is made once by the test; Redis is on the class path of these tests
// but not used here.
@EnableAutoConfiguration(excludeName = { "org.springframework.boot.liquibase.autoconfigure.LiquibaseAutoConfiguration",
		"org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration",
		"org.springframework.boot.data.redis.autoconfigure.DataRedisReactiveAutoConfiguration",
		"org.springframework.boot.data.redis.autoconfigure.DataRedisRepositoriesAutoConfiguration",
		"org.springframework.boot.data.redis.autoconfigure.health.DataRedisHealthContributorAutoConfiguration",
		"org.springframework.boot.data.redis.autoconfigure.health.DataRedisReactiveHealthContributorAutoConfiguration",
		"org.springframework.boot.data.redis.autoconfigure.observation.LettuceObservationAutoConfiguration" })
class CrashTestApplication {

	/** The answer's header that says the order was not placed by this request. */
	static final String REPLAYED_HEADER = "Idempotent-Replayed";

	/**
	 * Keys whose attempts the test races, shared by the nodes of this JVM: each attempt
	 * counts down and waits for the others inside {@link Orders#place}.
	 */
	static final Map<String, CountDownLatch> RACES = new ConcurrentHashMap<>();

	/** Set on the request when {@link Orders#place} ran in it. */
	private static final String PLACED_ATTRIBUTE = CrashTestApplication.class.getName() + ".placed";

	@Bean
	SimpleMeterRegistry meterRegistry() {
		return new SimpleMeterRegistry();
	}

	@Bean
	CrashSwitch crashSwitch(@Value("${crash.node-name}") String nodeName, @Value("${crash.admin-url}") String adminUrl,
			DataSource dataSource) {
		return new CrashSwitch(nodeName, adminUrl, dataSource);
	}

	@Bean
	Orders orders(OrderRepository repository, JdbcClient jdbc) {
		return new Orders(repository, jdbc);
	}

	@Bean
	Checkout checkout(Orders orders, CrashSwitch crash) {
		return new Checkout(orders, crash);
	}

	/** What the client asks for. */
	record NewOrder(String item, int amount) {
	}

	/** The business effect: one row per placed order. */
	@Table("crash_order")
	record PlacedOrder(@Id @Nullable Long id, String idemKey, String item, int amount) {
	}

	interface OrderRepository extends CrudRepository<PlacedOrder, Long> {

	}

	@Configuration(proxyBeanMethods = false)
	@EnableJdbcRepositories(considerNestedRepositories = true, basePackageClasses = CrashTestApplication.class,
			includeFilters = @Filter(type = FilterType.ASSIGNABLE_TYPE, classes = OrderRepository.class))
	static class DataJdbcConfiguration extends AbstractJdbcConfiguration {

	}

	/** The business operation, protected by the method door. */
	static class Orders {

		private final OrderRepository repository;

		private final JdbcClient jdbc;

		Orders(OrderRepository repository, JdbcClient jdbc) {
			this.repository = repository;
			this.jdbc = jdbc;
		}

		/**
		 * Saves the order and moves the ledger: two writes whose double effect would be
		 * visible (two rows for one key, the ledger moved twice).
		 */
		@Idempotent(key = "#key", keyRequired = true)
		public PlacedOrder place(String key, NewOrder order) {
			RequestContextHolder.currentRequestAttributes()
				.setAttribute(PLACED_ATTRIBUTE, Boolean.TRUE, RequestAttributes.SCOPE_REQUEST);
			awaitRace(key);
			PlacedOrder placed = this.repository.save(new PlacedOrder(null, key, order.item(), order.amount()));
			this.jdbc.sql("UPDATE crash_ledger SET total = total + :amount, orders = orders + 1 WHERE id = 1")
				.param("amount", order.amount())
				.update();
			return placed;
		}

	}

	/**
	 * The business transaction's boundary, around the method door: the method door's
	 * completion of the record runs before this transaction commits.
	 */
	static class Checkout {

		private final Orders orders;

		private final CrashSwitch crash;

		Checkout(Orders orders, CrashSwitch crash) {
			this.orders = orders;
			this.crash = crash;
		}

		@Transactional
		public PlacedOrder place(String key, NewOrder order) {
			PlacedOrder placed = this.orders.place(key, order);
			// The method door has completed the record, in this transaction.
			this.crash.at(CrashPoint.BEFORE_COMMIT);
			return placed;
		}

	}

	/**
	 * Holds an attempt of a key the test races until the other attempt has come this far
	 * too: both looked for a record and found none, and both run the operation.
	 */
	private static void awaitRace(String key) {
		CountDownLatch race = RACES.get(key);
		if (race == null) {
			return;
		}
		race.countDown();
		try {
			if (!race.await(10, TimeUnit.SECONDS)) {
				throw new IllegalStateException("the other attempt of " + key + " did not come within 10 s");
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/** Registered as a member class of this configuration. */
	@RestController
	static class OrderController {

		private final Checkout checkout;

		private final CrashSwitch crash;

		OrderController(Checkout checkout, CrashSwitch crash) {
			this.checkout = checkout;
			this.crash = crash;
		}

		@PostMapping("/orders")
		ResponseEntity<PlacedOrder> place(@RequestHeader("Idempotency-Key") String key, @RequestBody NewOrder order,
				HttpServletRequest request) {
			PlacedOrder placed = this.checkout.place(key, order);
			// Committed.
			this.crash.at(CrashPoint.AFTER_COMMIT);
			ResponseEntity.BodyBuilder answer = ResponseEntity.ok();
			if (request.getAttribute(PLACED_ATTRIBUTE) == null) {
				answer.header(REPLAYED_HEADER, "true");
			}
			return answer.body(placed);
		}

	}

	/**
	 * Crashes the node once, at the point the test armed: every database session of the
	 * node is terminated from an administrator's connection (PostgreSQL then rolls back
	 * whatever transaction the session had open, as when the process dies), and a
	 * {@link NodeCrash} unwinds the request so that nothing more of it is done. The
	 * node's sessions are told apart by their {@code ApplicationName}, the node's name.
	 * The node's pool is closed too, as a dead process has none: else the threads that go
	 * on until the test closes the context (the request unwinding, which releases a
	 * lease-mode reservation; the heartbeat) could take a fresh connection from it and
	 * write what a crashed node never writes (a released record where the crash leaves
	 * one in progress).
	 */
	static final class CrashSwitch {

		private final String nodeName;

		private final String adminUrl;

		private final AtomicReference<CrashPoint> armed = new AtomicReference<>(CrashPoint.NONE);

		private final DataSource dataSource;

		private volatile boolean crashed;

		CrashSwitch(String nodeName, String adminUrl, DataSource dataSource) {
			this.nodeName = nodeName;
			this.adminUrl = adminUrl;
			this.dataSource = dataSource;
		}

		/** The next request that passes this point crashes the node there. */
		void arm(CrashPoint point) {
			this.armed.set(point);
		}

		boolean crashed() {
			return this.crashed;
		}

		void at(CrashPoint point) {
			if (point == CrashPoint.NONE || !this.armed.compareAndSet(point, CrashPoint.NONE)) {
				return;
			}
			this.crashed = true;
			try {
				terminateSessions();
			}
			catch (SQLException | InterruptedException ex) {
				throw new NodeCrash(this.nodeName + " could not terminate its sessions at " + point, ex);
			}
			finally {
				if (this.dataSource instanceof HikariDataSource pool) {
					pool.close();
				}
			}
			throw new NodeCrash(this.nodeName + " crashed at " + point, null);
		}

		/**
		 * Terminates the node's sessions and waits until the server has ended them:
		 * {@code pg_terminate_backend} only signals the backend.
		 */
		private void terminateSessions() throws SQLException, InterruptedException {
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
			try (Connection admin = DriverManager.getConnection(this.adminUrl, "postgres", "");
					PreparedStatement terminate = admin.prepareStatement(
							"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = ?");
					PreparedStatement count = admin
						.prepareStatement("SELECT count(*) FROM pg_stat_activity WHERE application_name = ?")) {
				terminate.setString(1, this.nodeName);
				count.setString(1, this.nodeName);
				while (true) {
					terminate.executeQuery().close();
					try (ResultSet rows = count.executeQuery()) {
						rows.next();
						if (rows.getInt(1) == 0) {
							return;
						}
					}
					if (System.nanoTime() > deadline) {
						throw new SQLException("the sessions of " + this.nodeName + " are still there after 10 s");
					}
					Thread.sleep(5);
				}
			}
		}

	}

	/**
	 * The crash: an {@link Error}, so that no {@code catch (Exception)} on the way goes
	 * on as if the request could still finish.
	 */
	@SuppressWarnings("serial")
	static final class NodeCrash extends Error {

		NodeCrash(String message, @Nullable Throwable cause) {
			super(message, cause);
		}

	}

}
