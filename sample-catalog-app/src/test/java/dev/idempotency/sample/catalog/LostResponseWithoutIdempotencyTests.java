package dev.idempotency.sample.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.idempotency.sample.catalog.support.CatalogHttp;
import dev.idempotency.sample.catalog.support.LostResponseTestSupport;
import dev.idempotency.sample.catalog.support.IcebergFixtures;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

import org.springframework.test.context.TestPropertySource;

/**
 * The same lost responses as {@link LostResponseTests} with the starter switched off: the
 * catalog advertises no key lifetime, the client sends no key and cannot safely retry,
 * and every lost response becomes an error although the operation took effect. This is
 * what the starter fixes.
 */
@TestPropertySource(properties = "idempotency.enabled=false")
class LostResponseWithoutIdempotencyTests extends LostResponseTestSupport {

	@Test
	void configAdvertisesNoKeyLifetime() {
		assertThat(new CatalogHttp(catalogUri()).get("/v1/config").json().has("idempotency-key-lifetime")).isFalse();
	}

	@Test
	void lostResponsesSurfaceAsFailuresOfOperationsThatTookEffect() {
		Namespace namespace = Namespace.of("unprotected");
		assertThatThrownBy(() -> this.client.createNamespace(namespace)).hasMessageContaining("502");
		assertThat(this.direct.namespaceExists(namespace)).as("created although the client was told it failed")
			.isTrue();
		assertThatThrownBy(() -> this.client.createNamespace(namespace)).as("the application's own retry")
			.isInstanceOf(AlreadyExistsException.class);

		TableIdentifier events = TableIdentifier.of(namespace, "events");
		assertThatThrownBy(() -> this.client.createTable(events, IcebergFixtures.SCHEMA)).hasMessageContaining("502");
		assertThatThrownBy(() -> this.client.createTable(events, IcebergFixtures.SCHEMA))
			.isInstanceOf(AlreadyExistsException.class);

		Table table = this.client.loadTable(events);
		assertThatThrownBy(() -> table.updateSchema().addColumn("ts", Types.TimestampType.withZone()).commit())
			.isInstanceOf(CommitStateUnknownException.class);
		assertThat(this.direct.loadTable(events).schema().findField("ts"))
			.as("committed although the client was told the state is unknown")
			.isNotNull();

		assertThat(this.client.dropTable(events)).as("the retried DELETE finds nothing: the client reports no drop")
			.isFalse();
		assertThat(this.direct.tableExists(events)).isFalse();
		assertThat(this.proxy.mutations()).noneMatch(exchange -> exchange.idempotencyKey() != null);
	}

}
