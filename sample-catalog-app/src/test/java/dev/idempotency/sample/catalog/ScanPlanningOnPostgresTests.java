package dev.idempotency.sample.catalog;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

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
		try (ConfigurableApplicationContext nodeB = startSecondNode();
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
		try (ConfigurableApplicationContext nodeB = startSecondNode()) {
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

	/** Another node of the catalog: same database, same warehouse, same limits. */
	private ConfigurableApplicationContext startSecondNode() {
		return new SpringApplicationBuilder(SampleCatalogApplication.class).run("--server.port=0",
				"--spring.datasource.url=" + this.environment.getRequiredProperty("spring.datasource.url"),
				"--spring.datasource.username=" + this.environment.getRequiredProperty("spring.datasource.username"),
				"--spring.datasource.password=", "--spring.jmx.enabled=false",
				"--catalog.warehouse=" + this.environment.getRequiredProperty("catalog.warehouse"),
				"--catalog.scan-planning.tasks-per-plan-task=2", "--catalog.scan-planning.max-file-scan-tasks=6",
				"--catalog.scan-planning.max-live-plans=" + MAX_LIVE_PLANS);
	}

	private static URI uriOf(ConfigurableApplicationContext node) {
		return URI.create("http://127.0.0.1:" + ((WebServerApplicationContext) node).getWebServer().getPort());
	}

}
