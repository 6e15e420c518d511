package dev.idempotency.sample.catalog;

import static org.assertj.core.api.Assertions.assertThat;

import dev.idempotency.sample.catalog.support.CatalogHttp;
import dev.idempotency.sample.catalog.support.CatalogHttp.Response;
import dev.idempotency.sample.catalog.support.CatalogServerTestSupport;
import dev.idempotency.sample.catalog.support.IcebergFixtures;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.expressions.Expressions;
import org.apache.iceberg.rest.RESTCatalog;
import org.junit.jupiter.api.Test;

import org.springframework.test.context.TestPropertySource;

/**
 * Plans that expire as soon as they are made ({@code plan-lifetime=PT0S}), by the
 * database's clock: the plan request is answered, after that the plan and its tasks are
 * gone (404), and expired plans do not count against the live limit (one here): every new
 * plan fits. H2 here; the subclasses run the same on PostgreSQL and MariaDB.
 */
@TestPropertySource(properties = { "catalog.scan-planning.plan-lifetime=PT0S", "catalog.scan-planning.max-live-plans=1",
		"catalog.scan-planning.tasks-per-plan-task=1" })
class ScanPlanExpiryTests extends CatalogServerTestSupport {

	@Test
	void anExpiredPlanIsGoneAndTakesNoPlace() throws Exception {
		try (RESTCatalog client = connect(catalogUri())) {
			client.createNamespace(Namespace.of("expiry_ns"));
			Table table = client.createTable(TableIdentifier.of(Namespace.of("expiry_ns"), "events"),
					IcebergFixtures.SCHEMA);
			table.newAppend()
				.appendFile(IcebergFixtures.dataFile(table))
				.appendFile(IcebergFixtures.dataFile(table))
				.commit();
		}
		CatalogHttp http = new CatalogHttp(catalogUri());
		String plan = "/v1/namespaces/expiry_ns/tables/events/plan";
		for (int i = 0; i < 3; i++) {
			Response planned = http.post(plan, ScanPlanningTests.planRequest(Expressions.alwaysTrue()),
					"Idempotency-Key", ScanPlanningTests.newKey());
			assertThat(planned.status()).as(planned.toString()).isEqualTo(200);
			assertThat(planned.json().path("plan-tasks")).hasSize(2);

			Response state = http.get(plan + "/" + planned.json().path("plan-id").asText());
			assertThat(state.status()).as(state.toString()).isEqualTo(404);
			assertThat(state.errorType()).isEqualTo("NoSuchPlanIdException");
			Response tasks = http.post("/v1/namespaces/expiry_ns/tables/events/tasks",
					"{\"plan-task\":\"" + planned.json().path("plan-tasks").get(0).asText() + "\"}");
			assertThat(tasks.status()).as(tasks.toString()).isEqualTo(404);
			assertThat(tasks.errorType()).isEqualTo("NoSuchPlanTaskException");
		}
	}

}
