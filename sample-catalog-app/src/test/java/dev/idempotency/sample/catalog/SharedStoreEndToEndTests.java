package dev.idempotency.sample.catalog;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;

import dev.idempotency.sample.catalog.support.CatalogHttp;
import dev.idempotency.sample.catalog.support.CatalogHttp.Response;
import dev.idempotency.sample.catalog.support.CatalogServerTestSupport;
import dev.idempotency.store.IdempotencyStore;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.rest.RESTUtil;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;

/**
 * The sample catalog end to end over real HTTP with its idempotency records in a shared
 * store (PostgreSQL or Redis, one subclass each): a replay, a refused reuse, and the
 * Iceberg client's own keyed mutations, with the records really written to that store.
 */
abstract class SharedStoreEndToEndTests extends CatalogServerTestSupport {

	@Autowired
	private IdempotencyStore store;

	private CatalogHttp http;

	@BeforeEach
	void connect() {
		this.http = new CatalogHttp(catalogUri());
	}

	/** The store's name as the application should have chosen it. */
	abstract String expectedStore();

	/** How many records the run wrote into the shared server. */
	abstract long recordsInServer();

	@Test
	void theConfiguredStoreIsTheOneInUse() {
		assertThat(this.store.name()).isEqualTo(expectedStore());
	}

	@Test
	void aRetryIsReplayedFromTheSharedStoreAndReuseIsRefused() {
		long before = recordsInServer();
		String key = RESTUtil.idempotencyHeaders().get(RESTUtil.IDEMPOTENCY_KEY_HEADER);
		String body = "{\"namespace\":[\"e2e_" + expectedStore() + "\"],\"properties\":{\"owner\":\"alice\"}}";
		Response first = this.http.post("/v1/namespaces", body, "Idempotency-Key", key);
		Response retry = this.http.post("/v1/namespaces", body, "Idempotency-Key", key);
		Response reuse = this.http.post("/v1/namespaces", "{\"namespace\":[\"other\"]}", "Idempotency-Key", key);

		assertThat(first.status()).isEqualTo(200);
		assertThat(retry.status()).isEqualTo(200);
		assertThat(retry.header("Idempotent-Replayed")).isEqualTo("true");
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(reuse.status()).isEqualTo(422);
		assertThat(reuse.errorType()).isEqualTo("IdempotencyKeyReusedException");
		assertThat(recordsInServer()).isEqualTo(before + 1);
	}

	@Test
	void theIcebergClientsKeyedMutationsGoThroughTheSharedStore() throws Exception {
		long before = recordsInServer();
		try (RESTCatalog client = connect(catalogUri())) {
			// Iceberg looks up a null key in the map: Map.of refuses that, a HashMap does
			// not.
			client.createNamespace(Namespace.of("client_" + expectedStore()),
					new java.util.HashMap<>(Map.of("a", "1")));
			client.setProperties(Namespace.of("client_" + expectedStore()), new java.util.HashMap<>(Map.of("b", "2")));
			Map<String, String> properties = client.loadNamespaceMetadata(Namespace.of("client_" + expectedStore()));
			assertThat(properties.get("a")).isEqualTo("1");
			assertThat(properties.get("b")).isEqualTo("2");
			assertThat(client.listNamespaces()).contains(Namespace.of("client_" + expectedStore()));
		}
		assertThat(recordsInServer()).as("one record per keyed mutation").isEqualTo(before + 2);
	}

}
