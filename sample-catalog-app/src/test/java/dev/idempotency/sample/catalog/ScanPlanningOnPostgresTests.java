package dev.idempotency.sample.catalog;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.JsonNode;
import dev.idempotency.sample.catalog.support.CatalogHttp;
import dev.idempotency.sample.catalog.support.CatalogHttp.Response;
import dev.idempotency.sample.catalog.support.CatalogProxy;
import dev.idempotency.sample.catalog.support.JdbcStores;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.rest.RESTCatalogProperties;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.Environment;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * {@link ScanPlanningTests} with the catalog, its plans and the JDBC store in a
 * PostgreSQL database of this class's own (127.0.0.1:5432, dropped at the end), and a
 * second node: another application context in this JVM, on the same database and
 * warehouse, with a port of its own. A plan made on one node is read, fetched and
 * cancelled on the other; a plan whose answer was lost on the way from one node is
 * answered again, same plan id, by the other; and the limit on live plans holds over both
 * nodes at once.
 */
class ScanPlanningOnPostgresTests extends ScanPlanningTests {

	private static JdbcStores.Store database;

	@Autowired
	private Environment environment;

	@DynamicPropertySource
	static void store(DynamicPropertyRegistry registry) throws SQLException {
		database = JdbcStores.postgres(registry);
	}

	@AfterAll
	static void dropDatabase() throws SQLException {
		database.drop();
	}

	@Test
	void aPlanWhoseAnswerWasLostIsServedByTheOtherNode() throws Exception {
		TableIdentifier identifier = tableWithFiles("nodes_ns", "events", 3, 2);
		String plan = "/v1/namespaces/nodes_ns/tables/events/plan";
		try (ConfigurableApplicationContext nodeB = startSecondNode(8);
				CatalogProxy losing = CatalogProxy.losingFirstResponses(catalogUri())) {
			CatalogHttp onA = this.http;
			CatalogHttp onB = new CatalogHttp(uriOf(nodeB));

			// Planned on A, the answer lost on the way; the client's retry reaches B.
			String key = newKey();
			String request = planRequest(Expressions.equal("data", "a"));
			Response lost = new CatalogHttp(losing.uri()).post(plan, request, "Idempotency-Key", key);
			assertThat(lost.status()).isEqualTo(502);
			String planIdOnA = losing.exchanges()
				.get(0)
				.responseBody()
				.replaceAll(".*\"plan-id\":\"([^\"]+)\".*", "$1");
			Response retried = onB.post(plan, request, "Idempotency-Key", key);
			assertThat(retried.status()).as(retried.toString()).isEqualTo(200);
			assertThat(retried.header("Idempotent-Replayed")).isEqualTo("true");
			String planId = retried.json().path("plan-id").asText();
			assertThat(planId).isEqualTo(planIdOnA);

			// B reads the plan A made and serves its tasks: the three files of data=a.
			Response state = onB.get(plan + "/" + planId);
			assertThat(state.json().path("status").asText()).isEqualTo("completed");
			int files = 0;
			for (JsonNode planTask : state.json().path("plan-tasks")) {
				Response tasks = onB.post("/v1/namespaces/nodes_ns/tables/events/tasks",
						"{\"plan-task\":\"" + planTask.asText() + "\"}", "Idempotency-Key", newKey());
				assertThat(tasks.status()).as(tasks.toString()).isEqualTo(200);
				files += tasks.json().path("file-scan-tasks").size();
			}
			assertThat(files).isEqualTo(3);

			// Cancelled on B, cancelled again on A; both see it cancelled.
			assertThat(onB.delete(plan + "/" + planId, "Idempotency-Key", newKey()).status()).isEqualTo(204);
			assertThat(onA.delete(plan + "/" + planId, "Idempotency-Key", newKey()).status()).isEqualTo(204);
			assertThat(onA.get(plan + "/" + planId).json().path("status").asText()).isEqualTo("cancelled");

			// Iceberg's client, planning on B a table written through A.
			try (RESTCatalog throughB = connect(uriOf(nodeB), java.util.Map.of(RESTCatalogProperties.SCAN_PLANNING_MODE,
					RESTCatalogProperties.ScanPlanningMode.SERVER.modeName()))) {
				assertThat(tasks(throughB.loadTable(identifier).newScan())).hasSize(5)
					.isEqualTo(tasks(this.localPlanning.loadTable(identifier).newScan()));
			}
		}
	}

	/**
	 * Eight clients plan at once, half on each node, where four plans may be live: four
	 * are planned, four get 503.
	 */
	@Test
	void theLiveLimitHoldsOverBothNodes() throws Exception {
		tableWithFiles("nodes_limit_ns", "events", 1, 1);
		String plan = "/v1/namespaces/nodes_limit_ns/tables/events/plan";
		try (ConfigurableApplicationContext nodeB = startSecondNode(8)) {
			List<CatalogHttp> nodes = List.of(this.http, new CatalogHttp(uriOf(nodeB)));
			int clients = 2 * MAX_LIVE_PLANS;
			CountDownLatch start = new CountDownLatch(1);
			ExecutorService threads = Executors.newFixedThreadPool(clients);
			List<Future<Response>> answers = new ArrayList<>();
			try {
				for (int i = 0; i < clients; i++) {
					CatalogHttp node = nodes.get(i % 2);
					Callable<Response> attempt = () -> {
						start.await();
						return node.post(plan, planRequest(Expressions.alwaysTrue()), "Idempotency-Key", newKey());
					};
					answers.add(threads.submit(attempt));
				}
				start.countDown();
				List<Integer> statuses = new ArrayList<>();
				for (Future<Response> answer : answers) {
					Response response = answer.get();
					statuses.add(response.status());
					if (response.status() == 200) {
						cancelAfterwards(plan + "/" + response.json().path("plan-id").asText());
					}
				}
				assertThat(statuses).filteredOn(status -> status == 200).hasSize(MAX_LIVE_PLANS);
				assertThat(statuses).filteredOn(status -> status == 503).hasSize(clients - MAX_LIVE_PLANS);
			}
			finally {
				threads.shutdownNow();
			}
		}
	}

	/**
	 * A node that plans one scan at a time: while its plan waits on the reservation's
	 * lock row (which the test holds), a second plan on that node is refused with 503 at
	 * once; the first one is planned when the lock is let go, and the node plans again.
	 */
	@Test
	void aNodePlansNoMoreScansAtOnceThanItsLimit() throws Exception {
		tableWithFiles("busy_ns", "events", 1, 1);
		String plan = "/v1/namespaces/busy_ns/tables/events/plan";
		try (ConfigurableApplicationContext nodeB = startSecondNode(1);
				Connection lock = DriverManager
					.getConnection(this.environment.getRequiredProperty("spring.datasource.url"), "postgres", "")) {
			CatalogHttp onB = new CatalogHttp(uriOf(nodeB));
			lock.setAutoCommit(false);
			try (Statement statement = lock.createStatement()) {
				statement.executeQuery("SELECT id FROM catalog_scan_plan_lock WHERE id = 1 FOR UPDATE").close();
			}
			CompletableFuture<Response> held = CompletableFuture
				.supplyAsync(() -> onB.post(plan, planRequest(Expressions.alwaysTrue()), "Idempotency-Key", newKey()));
			Response refused;
			try {
				awaitSessionsBlockedBy(lock, 1, held);
				// Refused at once; were it let through, it would wait on the lock too.
				CompletableFuture<Response> second = CompletableFuture.supplyAsync(
						() -> onB.post(plan, planRequest(Expressions.alwaysTrue()), "Idempotency-Key", newKey()));
				try {
					awaitSessionsBlockedBy(lock, 2, second);
					throw new AssertionError("a second plan on a node that plans one at a time waited on the lock row");
				}
				catch (Answered answered) {
					refused = answered.response;
				}
			}
			finally {
				lock.rollback();
			}
			assertThat(refused.status()).as(refused.toString()).isEqualTo(503);
			assertThat(refused.header("Retry-After")).isNotNull();
			assertThat(refused.json().path("error").path("message").asText())
				.contains("catalog.scan-planning.max-concurrent-plans");
			Response planned = held.get();
			assertThat(planned.status()).as(planned.toString()).isEqualTo(200);
			cancelAfterwards(plan + "/" + planned.json().path("plan-id").asText());
			Response next = onB.post(plan, planRequest(Expressions.alwaysTrue()), "Idempotency-Key", newKey());
			assertThat(next.status()).as(next.toString()).isEqualTo(200);
			cancelAfterwards(plan + "/" + next.json().path("plan-id").asText());
		}
	}

	/**
	 * Waits until {@code sessions} sessions of this test's database wait on a lock (the
	 * one {@code lock} holds: a second waiter on a row waits on the first waiter, not on
	 * the holder), or {@code request} is answered ({@link Answered}).
	 */
	private static void awaitSessionsBlockedBy(Connection lock, int sessions, CompletableFuture<Response> request)
			throws SQLException, InterruptedException {
		long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
		while (true) {
			try (Statement statement = lock.createStatement();
					ResultSet count = statement
						.executeQuery("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
								+ " AND cardinality(pg_blocking_pids(pid)) > 0")) {
				count.next();
				if (count.getLong(1) >= sessions) {
					return;
				}
			}
			if (request.isDone()) {
				throw new Answered(request.join());
			}
			if (System.nanoTime() > deadline) {
				throw new IllegalStateException("the plan never waited on the lock row");
			}
			Thread.sleep(10);
		}
	}

	/** A request answered while the test waited for it to block. */
	private static final class Answered extends RuntimeException {

		private final Response response;

		Answered(Response response) {
			super(response.toString());
			this.response = response;
		}

	}

	/**
	 * Another node of the catalog: same database, same warehouse, same limits, planning
	 * at most {@code maxConcurrentPlans} scans at once.
	 */
	private ConfigurableApplicationContext startSecondNode(int maxConcurrentPlans) {
		return new SpringApplicationBuilder(SampleCatalogApplication.class).run("--server.port=0",
				"--spring.datasource.url=" + this.environment.getRequiredProperty("spring.datasource.url"),
				"--spring.datasource.username=" + this.environment.getRequiredProperty("spring.datasource.username"),
				"--spring.datasource.password=", "--spring.jmx.enabled=false",
				"--catalog.warehouse=" + this.environment.getRequiredProperty("catalog.warehouse"),
				"--catalog.scan-planning.tasks-per-plan-task=2", "--catalog.scan-planning.max-file-scan-tasks=6",
				"--catalog.scan-planning.max-live-plans=" + MAX_LIVE_PLANS,
				"--catalog.scan-planning.max-concurrent-plans=" + maxConcurrentPlans);
	}

	private static URI uriOf(ConfigurableApplicationContext node) {
		return URI.create("http://127.0.0.1:" + ((WebServerApplicationContext) node).getWebServer().getPort());
	}

}
