package dev.idempotency.sample.catalog;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import dev.idempotency.sample.catalog.support.CatalogHttp;
import dev.idempotency.sample.catalog.support.CatalogHttp.Response;
import dev.idempotency.sample.catalog.support.CatalogServerTestSupport;
import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.TableMetadataParser;
import org.apache.iceberg.rest.RESTUtil;
import org.apache.iceberg.rest.responses.LoadCredentialsResponseParser;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The REST API as a client sees it on the wire: routes with and without prefix, the
 * config, statuses and Iceberg's error shape.
 */
class CatalogHttpApiTests extends CatalogServerTestSupport {

	private static final String TABLE = """
			{"name": "%s", "schema": {"type": "struct", "schema-id": 0,
			  "fields": [{"id": 1, "name": "id", "required": true, "type": "long"}]}}""";

	private CatalogHttp http;

	@BeforeEach
	void connect() {
		this.http = new CatalogHttp(catalogUri());
	}

	@Test
	void configAdvertisesTheServedEndpointsAndTheKeyLifetime() {
		Response config = this.http.get("/v1/config");

		assertThat(config.status()).isEqualTo(200);
		assertThat(config.json().path("idempotency-key-lifetime").asText()).isEqualTo("PT30M");
		List<String> endpoints = new ArrayList<>();
		config.json().path("endpoints").forEach(endpoint -> endpoints.add(endpoint.asText()));
		assertThat(endpoints)
			.contains("POST /v1/{prefix}/namespaces", "HEAD /v1/{prefix}/namespaces/{namespace}",
					"POST /v1/{prefix}/transactions/commit", "POST /v1/{prefix}/namespaces/{namespace}/register-view",
					"DELETE /v1/{prefix}/namespaces/{namespace}/views/{view}",
					"GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials",
					"POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/unregister",
					"POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan",
					"GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan/{plan-id}",
					"DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}/plan/{plan-id}",
					"POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/tasks")
			.hasSize(30)
			.noneMatch(endpoint -> endpoint.contains("/sign"));
	}

	@Test
	void healthShowsTheIdempotencyStoreAsItsOwnComponent() {
		Response health = this.http.get("/actuator/health");

		assertThat(health.status()).isEqualTo(200);
		assertThat(health.json().path("components").path("idempotency").path("status").asText()).isEqualTo("UP");
	}

	@Test
	void routesAnswerWithAndWithoutPrefix() {
		assertThat(this.http.post("/v1/namespaces", "{\"namespace\": [\"plain\"]}").status()).isEqualTo(200);
		assertThat(this.http.post("/v1/warehouse1/namespaces", "{\"namespace\": [\"prefixed\"]}").status())
			.isEqualTo(200);

		assertThat(this.http.head("/v1/warehouse1/namespaces/plain").status()).isEqualTo(204);
		assertThat(this.http.head("/v1/namespaces/prefixed").status()).isEqualTo(204);
		assertThat(this.http.head("/v1/namespaces/missing").status()).isEqualTo(404);
	}

	@Test
	void nestedNamespacesTravelJoinedByTheUnitSeparator() {
		this.http.post("/v1/namespaces", "{\"namespace\": [\"outer\"]}");
		Response created = this.http.post("/v1/namespaces", "{\"namespace\": [\"outer\", \"inner\"]}");
		assertThat(created.status()).isEqualTo(200);

		assertThat(this.http.get("/v1/namespaces/outer%1Finner").json().path("namespace").toString())
			.isEqualTo("[\"outer\",\"inner\"]");
		assertThat(this.http.get("/v1/namespaces?parent=outer").json().path("namespaces").toString())
			.isEqualTo("[[\"outer\",\"inner\"]]");
	}

	@Test
	void listsArePagedOnRequest() {
		for (String name : List.of("page_a", "page_b", "page_c")) {
			this.http.post("/v1/namespaces", "{\"namespace\": [\"paged\"]}");
			this.http.post("/v1/namespaces/paged/tables", TABLE.formatted(name));
		}
		Response first = this.http.get("/v1/namespaces/paged/tables?pageToken=&pageSize=2");
		assertThat(first.json().path("identifiers")).hasSize(2);
		String next = first.json().path("next-page-token").asText();
		Response second = this.http.get("/v1/namespaces/paged/tables?pageToken=" + next + "&pageSize=2");
		assertThat(second.json().path("identifiers")).hasSize(1);
		assertThat(second.json().path("next-page-token").isNull()).isTrue();

		Response invalid = this.http.get("/v1/namespaces/paged/tables?pageSize=many");
		assertThat(invalid.status()).isEqualTo(400);
	}

	@Test
	void errorsUseIcebergsShapeAndStatuses() {
		this.http.post("/v1/namespaces", "{\"namespace\": [\"errors\"]}");
		this.http.post("/v1/namespaces/errors/tables", TABLE.formatted("existing"));

		assertError(this.http.post("/v1/namespaces", "{\"namespace\": [\"errors\"]}"), 409, "AlreadyExistsException");
		assertError(this.http.post("/v1/namespaces/errors/tables", TABLE.formatted("existing")), 409,
				"AlreadyExistsException");
		assertError(this.http.get("/v1/namespaces/nowhere"), 404, "NoSuchNamespaceException");
		assertError(this.http.get("/v1/namespaces/errors/tables/missing"), 404, "NoSuchTableException");
		assertError(this.http.get("/v1/namespaces/errors/views/missing"), 404, "NoSuchViewException");
		assertError(this.http.get("/v1/namespaces/nowhere/tables"), 404, "NoSuchNamespaceException");
		assertError(this.http.delete("/v1/namespaces/errors"), 409, "NamespaceNotEmptyException");
		assertError(this.http.post("/v1/namespaces", "{\"namespace\": [\"broken\""), 400, "BadRequestException");
		assertError(this.http.post("/v1/namespaces", "{}"), 400, "BadRequestException");
		assertError(this.http.post("/v1/namespaces/errors/tables/existing", """
				{"requirements": [{"type": "assert-current-schema-id", "current-schema-id": 42}], "updates": []}"""),
				409, "CommitFailedException");
		assertError(this.http.get("/v1/namespaces/errors/tables/existing?snapshots=some"), 400,
				"IllegalArgumentException");
	}

	@Test
	void loadTableAnswersNotModifiedWhileTheMetadataIsUnchanged() {
		this.http.post("/v1/namespaces", "{\"namespace\": [\"etags\"]}");
		Response created = this.http.post("/v1/namespaces/etags/tables", TABLE.formatted("cached"));
		String etag = created.header("ETag");
		assertThat(etag).isNotBlank();

		Response loaded = this.http.get("/v1/namespaces/etags/tables/cached");
		assertThat(loaded.header("ETag")).isEqualTo(etag);
		assertThat(this.http.get("/v1/namespaces/etags/tables/cached", "If-None-Match", etag).status()).isEqualTo(304);
		assertThat(this.http.get("/v1/namespaces/etags/tables/cached?snapshots=refs", "If-None-Match", etag).status())
			.as("another snapshot mode is another representation")
			.isEqualTo(200);

		Response updated = this.http.post("/v1/namespaces/etags/tables/cached", """
				{"requirements": [], "updates": [{"action": "set-properties", "updates": {"k": "v"}}]}""");
		assertThat(updated.status()).isEqualTo(200);
		Response reloaded = this.http.get("/v1/namespaces/etags/tables/cached", "If-None-Match", etag);
		assertThat(reloaded.status()).isEqualTo(200);
		assertThat(reloaded.header("ETag")).isNotEqualTo(etag).isEqualTo(updated.header("ETag"));
	}

	@Test
	void dropAndExistsAnswerNoContent() {
		this.http.post("/v1/namespaces", "{\"namespace\": [\"drops\"]}");
		this.http.post("/v1/namespaces/drops/tables", TABLE.formatted("doomed"));

		assertThat(this.http.head("/v1/namespaces/drops/tables/doomed").status()).isEqualTo(204);
		assertThat(this.http.delete("/v1/namespaces/drops/tables/doomed?purgeRequested=true").status()).isEqualTo(204);
		assertThat(this.http.head("/v1/namespaces/drops/tables/doomed").status()).isEqualTo(404);
		assertError(this.http.delete("/v1/namespaces/drops/tables/doomed"), 404, "NoSuchTableException");
		assertThat(this.http.delete("/v1/namespaces/drops").status()).isEqualTo(204);
	}

	@Test
	void metricsReportsAreAccepted() {
		this.http.post("/v1/namespaces", "{\"namespace\": [\"metrics\"]}");
		this.http.post("/v1/namespaces/metrics/tables", TABLE.formatted("measured"));
		Response report = this.http.post("/v1/namespaces/metrics/tables/measured/metrics", """
				{"report-type": "commit-report", "table-name": "metrics.measured", "snapshot-id": 1,
				 "sequence-number": 1, "operation": "append", "metrics": {}}""");
		assertThat(report.status()).as(report.toString()).isEqualTo(204);
	}

	@Test
	void credentialsOfATableAreAnEmptyListAndOfAMissingTableNotFound() {
		this.http.post("/v1/namespaces", "{\"namespace\": [\"vending\"]}");
		this.http.post("/v1/namespaces/vending/tables", TABLE.formatted("local"));

		Response credentials = this.http.get("/v1/warehouse1/namespaces/vending/tables/local/credentials");
		assertThat(credentials.status()).as(credentials.toString()).isEqualTo(200);
		assertThat(credentials.body()).isEqualToIgnoringWhitespace("{\"storage-credentials\": []}");
		assertThat(LoadCredentialsResponseParser.fromJson(credentials.body()).credentials())
			.as("Iceberg's own parser reads the answer")
			.isEmpty();
		assertThat(this.http.get("/v1/namespaces/vending/tables/local/credentials?planId=p1").status()).isEqualTo(200);

		assertError(this.http.get("/v1/namespaces/vending/tables/missing/credentials"), 404, "NoSuchTableException");
		assertError(this.http.get("/v1/namespaces/nowhere/tables/missing/credentials"), 404, "NoSuchTableException");
	}

	/**
	 * Unregister forgets the table and keeps its files: the answer's metadata is the
	 * table's last (the property set just before), its metadata file is still there, and
	 * the table registers again from it. A retry with the same key is replayed, and does
	 * not unregister the re-registered table.
	 */
	@Test
	void unregisterForgetsTheTableKeepsItsFilesAndAnswersItsLastMetadata() {
		this.http.post("/v1/namespaces", "{\"namespace\": [\"unreg\"]}");
		this.http.post("/v1/namespaces/unreg/tables", TABLE.formatted("kept"));
		Response updated = this.http.post("/v1/namespaces/unreg/tables/kept", """
				{"requirements": [], "updates": [{"action": "set-properties", "updates": {"last": "yes"}}]}""");
		String lastLocation = updated.json().path("metadata-location").asText();
		String key = RESTUtil.idempotencyHeaders().get(RESTUtil.IDEMPOTENCY_KEY_HEADER);

		Response unregistered = this.http.post("/v1/warehouse1/namespaces/unreg/tables/kept/unregister", "",
				"Idempotency-Key", key);

		assertThat(unregistered.status()).as(unregistered.toString()).isEqualTo(200);
		assertThat(unregistered.json().path("metadata-location").asText()).isEqualTo(lastLocation);
		TableMetadata metadata = TableMetadataParser.fromJson(unregistered.json().path("metadata").toString());
		assertThat(metadata.properties()).containsEntry("last", "yes");
		assertThat(this.http.head("/v1/namespaces/unreg/tables/kept").status()).isEqualTo(404);
		assertThat(lastLocation.startsWith("file:") ? Path.of(URI.create(lastLocation)) : Path.of(lastLocation))
			.as("the metadata file is kept")
			.exists();

		Response registered = this.http.post("/v1/namespaces/unreg/register",
				"{\"name\": \"kept\", \"metadata-location\": \"" + lastLocation + "\"}");
		assertThat(registered.status()).as(registered.toString()).isEqualTo(200);
		assertThat(registered.json().path("metadata").path("properties").path("last").asText()).isEqualTo("yes");

		Response retried = this.http.post("/v1/warehouse1/namespaces/unreg/tables/kept/unregister", "",
				"Idempotency-Key", key);
		assertThat(retried.status()).isEqualTo(200);
		assertThat(retried.header("Idempotent-Replayed")).isEqualTo("true");
		assertThat(this.http.head("/v1/namespaces/unreg/tables/kept").status()).as("the replay changed nothing")
			.isEqualTo(204);

		assertError(this.http.post("/v1/namespaces/unreg/tables/missing/unregister", ""), 404, "NoSuchTableException");
	}

	private static void assertError(Response response, int status, String type) {
		assertThat(response.status()).as(response.toString()).isEqualTo(status);
		JsonNode error = response.json().path("error");
		assertThat(error.path("type").asText()).as(response.toString()).isEqualTo(type);
		assertThat(error.path("code").asInt()).isEqualTo(status);
		assertThat(error.path("message").asText()).isNotBlank();
	}

}
