package dev.idempotency.sample.catalog;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.Map;

import dev.idempotency.sample.catalog.support.CatalogHttp.Response;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.rest.RESTUtil;
import org.junit.jupiter.api.Test;

import org.springframework.test.annotation.DirtiesContext;

/**
 * The sample catalog end to end over real HTTP with its idempotency records in a shared
 * store (one subclass per store, and one more per store for record-after-success mode):
 * the Iceberg client round trips of {@link IcebergClientRoundTripTests}, a replay, a
 * refused reuse, and the Iceberg client's own keyed mutations, with the records really
 * written to that store. The context is closed after the class: its schema, database, key
 * prefix or cluster is gone by then.
 */
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
abstract class SharedStoreEndToEndTests extends IcebergClientRoundTripTests {

	/** The store's name as the application should have chosen it. */
	abstract String expectedStore();

	/** How many records this class's context wrote into the shared server. */
	@Override
	protected abstract long recordsInStore();

	@Test
	void theConfiguredStoreIsTheOneInUse() {
		assertThat(this.store.name()).isEqualTo(expectedStore());
	}

	@Test
	void aRetryIsReplayedFromTheSharedStoreAndReuseIsRefused() {
		long before = recordsInStore();
		String key = RESTUtil.idempotencyHeaders().get(RESTUtil.IDEMPOTENCY_KEY_HEADER);
		String body = "{\"namespace\":[\"e2e_" + storeTag() + "\"],\"properties\":{\"owner\":\"alice\"}}";
		Response first = this.http.post("/v1/namespaces", body, "Idempotency-Key", key);
		Response retry = this.http.post("/v1/namespaces", body, "Idempotency-Key", key);
		Response reuse = this.http.post("/v1/namespaces", "{\"namespace\":[\"other\"]}", "Idempotency-Key", key);

		assertThat(first.status()).isEqualTo(200);
		assertThat(retry.status()).isEqualTo(200);
		assertThat(retry.header("Idempotent-Replayed")).isEqualTo("true");
		assertThat(retry.body()).isEqualTo(first.body());
		assertThat(reuse.status()).isEqualTo(422);
		assertThat(reuse.errorType()).isEqualTo("IdempotencyKeyReusedException");
		assertThat(recordsInStore()).isEqualTo(before + 1);
		assertRanInTheConfiguredMode(1);
	}

	@Test
	void theIcebergClientsKeyedMutationsGoThroughTheSharedStore() throws Exception {
		long before = recordsInStore();
		Namespace namespace = Namespace.of("client_" + storeTag());
		try (RESTCatalog client = connect(catalogUri())) {
			// Iceberg looks up a null key in the map: Map.of refuses that, a HashMap does
			// not.
			client.createNamespace(namespace, new HashMap<>(Map.of("a", "1")));
			client.setProperties(namespace, new HashMap<>(Map.of("b", "2")));
			Map<String, String> properties = client.loadNamespaceMetadata(namespace);
			assertThat(properties.get("a")).isEqualTo("1");
			assertThat(properties.get("b")).isEqualTo("2");
			assertThat(client.listNamespaces()).contains(namespace);
		}
		assertThat(recordsInStore()).as("one record per keyed mutation").isEqualTo(before + 2);
		assertRanInTheConfiguredMode(2);
	}

}
