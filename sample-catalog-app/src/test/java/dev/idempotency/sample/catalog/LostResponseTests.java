package dev.idempotency.sample.catalog;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import dev.idempotency.sample.catalog.support.CatalogProxy;
import dev.idempotency.sample.catalog.support.LostResponseTestSupport;
import dev.idempotency.sample.catalog.support.IcebergFixtures;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.types.Types;
import org.junit.jupiter.api.Test;

/**
 * Responses lost on the way back: a proxy lets the catalog run the first attempt of every
 * mutation and answers the client {@code 502} instead. Iceberg's 1.12.0 client retries
 * with the same {@code Idempotency-Key}, the catalog replays the stored answer, and every
 * operation succeeds exactly once: no AlreadyExists, CommitFailed or CommitStateUnknown.
 * Lease mode (the default); {@link LostResponseRecordAfterSuccessTests} runs the same in
 * record-after-success mode.
 */
class LostResponseTests extends LostResponseTestSupport {

	@Test
	void everyOperationTakesEffectOnceDespiteLostResponses() {
		Namespace namespace = Namespace.of("lost");
		this.client.createNamespace(namespace, new HashMap<>(Map.of("owner", "alice")));
		assertThat(this.direct.listNamespaces()).containsOnlyOnce(namespace);

		TableIdentifier events = TableIdentifier.of(namespace, "events");
		Table table = this.client.createTable(events, IcebergFixtures.SCHEMA);
		assertThat(this.direct.listTables(namespace)).containsExactly(events);

		table.updateSchema().addColumn("ts", Types.TimestampType.withZone()).commit();
		table.newAppend().appendFile(IcebergFixtures.dataFile(table)).commit();
		table.newAppend().appendFile(IcebergFixtures.dataFile(table)).commit();
		Table committed = this.direct.loadTable(events);
		assertThat(committed.schema().findField("ts")).isNotNull();
		assertThat(committed.snapshots()).as("one snapshot per commit").hasSize(2);
		assertThat(committed.currentSnapshot().summary()).containsEntry("total-data-files", "2");

		TableIdentifier audit = TableIdentifier.of(namespace, "audit");
		this.client.createTable(audit, IcebergFixtures.SCHEMA);
		this.client.commitTransaction(IcebergFixtures.appendInTransaction(this.client, events),
				IcebergFixtures.appendInTransaction(this.client, audit));
		assertThat(this.direct.loadTable(events).snapshots()).hasSize(3);
		assertThat(this.direct.loadTable(audit).snapshots()).hasSize(1);

		TableIdentifier view = TableIdentifier.of(namespace, "recent");
		this.client.buildView(view)
			.withSchema(IcebergFixtures.SCHEMA)
			.withDefaultNamespace(namespace)
			.withQuery("spark", "select * from events")
			.create();
		TableIdentifier renamedView = TableIdentifier.of(namespace, "recent_v2");
		this.client.renameView(view, renamedView);
		assertThat(this.direct.listViews(namespace)).containsExactly(renamedView);
		assertThat(this.client.dropView(renamedView)).isTrue();

		TableIdentifier archived = TableIdentifier.of(namespace, "events_archive");
		this.client.renameTable(events, archived);
		assertThat(this.direct.listTables(namespace)).containsExactlyInAnyOrder(archived, audit);
		assertThat(this.client.dropTable(archived)).as("the replayed 204 tells the client it dropped the table")
			.isTrue();
		assertThat(this.client.dropTable(audit)).isTrue();
		assertThat(this.client.dropNamespace(namespace)).isTrue();
		assertThat(this.direct.namespaceExists(namespace)).isFalse();

		assertEveryLostResponseWasReplayedToTheRetry(14);
		assertRanInTheConfiguredMode(14);
	}

	private void assertEveryLostResponseWasReplayedToTheRetry(int operations) {
		List<CatalogProxy.Exchange> mutations = this.proxy.mutations();
		List<CatalogProxy.Exchange> lost = mutations.stream().filter(CatalogProxy.Exchange::lost).toList();
		assertThat(lost).as("one lost response per operation").hasSize(operations);
		for (CatalogProxy.Exchange first : lost) {
			List<CatalogProxy.Exchange> sameKey = mutations.stream()
				.filter(exchange -> first.idempotencyKey().equals(exchange.idempotencyKey()))
				.toList();
			assertThat(sameKey).as("attempts of " + first).hasSize(2);
			CatalogProxy.Exchange retry = sameKey.get(1);
			assertThat(retry.replayed()).as("retry of " + first).isTrue();
			assertThat(retry.status()).isEqualTo(first.status());
			assertThat(retry.responseBody()).isEqualTo(first.responseBody());
		}
	}

}
