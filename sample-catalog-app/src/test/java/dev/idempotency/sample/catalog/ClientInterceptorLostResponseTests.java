package dev.idempotency.sample.catalog;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.UUID;

import dev.idempotency.client.IdempotencyKeyClientInterceptor;
import dev.idempotency.sample.catalog.support.CatalogProxy;
import dev.idempotency.sample.catalog.support.CatalogServerTestSupport;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.rest.RESTCatalog;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.test.context.TestPropertySource;
import org.springframework.web.client.RestClient;

/**
 * The starter's client side against the catalog, over real HTTP, with every first
 * response lost: the application's own {@code RestClient.Builder} (Spring Boot's, with
 * {@code idempotency.client.enabled=true}) sends each call with a fresh key through a
 * proxy that lets the catalog run the first attempt and answers the client {@code 502}.
 * The interceptor retries with the same key, the catalog replays, and each operation
 * takes effect once: the caller sees one success per call, never an "already exists".
 */
@TestPropertySource(properties = { "idempotency.client.enabled=true", "idempotency.client.initial-backoff=10ms" })
class ClientInterceptorLostResponseTests extends CatalogServerTestSupport {

	@Autowired
	private RestClient.Builder builder;

	@Autowired
	private IdempotencyKeyClientInterceptor interceptor;

	private CatalogProxy proxy;

	private RestClient client;

	private RESTCatalog direct;

	@BeforeEach
	void connect() throws Exception {
		this.proxy = CatalogProxy.losingFirstResponses(catalogUri());
		this.client = this.builder.clone().baseUrl(this.proxy.uri().toString()).build();
		this.direct = connect(catalogUri());
	}

	@AfterEach
	void close() throws Exception {
		this.direct.close();
		this.proxy.close();
	}

	@Test
	void eachCallTakesEffectOnceAlthoughEveryFirstResponseIsLost() {
		assertThat(this.interceptor.settings().methods()).isNotEmpty();
		String namespace = "client_" + UUID.randomUUID().toString().replace("-", "").substring(0, 8);

		ResponseEntity<String> created = post("/v1/namespaces",
				"{\"namespace\":[\"" + namespace + "\"],\"properties\":{\"owner\":\"alice\"}}");
		ResponseEntity<String> table = post("/v1/namespaces/" + namespace + "/tables",
				"{\"name\":\"events\",\"schema\":{\"type\":\"struct\",\"schema-id\":0,\"fields\":"
						+ "[{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"}]}}");
		ResponseEntity<String> properties = post("/v1/namespaces/" + namespace + "/properties",
				"{\"removals\":[],\"updates\":{\"tier\":\"gold\"}}");

		assertThat(List.of(created, table, properties)).allSatisfy((answer) -> {
			assertThat(answer.getStatusCode().value()).isEqualTo(200);
			assertThat(answer.getHeaders().getFirst("Idempotent-Replayed")).isEqualTo("true");
		});
		assertThat(this.direct.listTables(Namespace.of(namespace)))
			.containsExactly(TableIdentifier.of(namespace, "events"));
		assertThat(this.direct.loadNamespaceMetadata(Namespace.of(namespace))).containsEntry("owner", "alice")
			.containsEntry("tier", "gold");

		List<CatalogProxy.Exchange> mutations = this.proxy.mutations();
		assertThat(mutations).as("each call: the lost first attempt and one retry").hasSize(6);
		for (int call = 0; call < 3; call++) {
			CatalogProxy.Exchange first = mutations.get(2 * call);
			CatalogProxy.Exchange retry = mutations.get(2 * call + 1);
			assertThat(first.lost()).isTrue();
			assertThat(first.idempotencyKey()).isNotNull();
			assertThat(UUID.fromString(first.idempotencyKey()).version()).isEqualTo(7);
			assertThat(retry.idempotencyKey()).isEqualTo(first.idempotencyKey());
			assertThat(retry.replayed()).as("the retry was answered from the record").isTrue();
		}
		assertThat(mutations.stream().map(CatalogProxy.Exchange::idempotencyKey).distinct()).hasSize(3);
		assertRanInTheConfiguredMode(3);
	}

	private ResponseEntity<String> post(String path, String json) {
		return this.client.post()
			.uri(path)
			.contentType(MediaType.APPLICATION_JSON)
			.body(json)
			.retrieve()
			.toEntity(String.class);
	}

}
