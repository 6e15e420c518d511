package dev.idempotency.sample.catalog;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.regex.Pattern;

import javax.sql.DataSource;

import dev.idempotency.sample.catalog.support.CatalogHttp;
import dev.idempotency.sample.catalog.support.CatalogHttp.Response;
import dev.idempotency.sample.catalog.support.CatalogProxy;
import dev.idempotency.sample.catalog.support.CatalogServerTestSupport;
import dev.idempotency.sample.catalog.support.IcebergFixtures;
import dev.idempotency.sample.catalog.support.RequestGate;
import dev.idempotency.store.IdempotencyStore;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.rest.RESTUtil;
import org.apache.iceberg.types.Types;
import org.apache.iceberg.view.View;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.test.context.TestPropertySource;

/**
 * Iceberg's own Java client (1.12.0, unmodified) against the running catalog: every kind
 * of object round-trips, and the client sends an {@code Idempotency-Key} with every
 * mutation because the catalog advertises a key lifetime. Every mutation went through the
 * store in the configured {@code idempotency.mode}, and a retry that arrives while the
 * first attempt still runs is answered as that mode promises.
 * <p>
 * This class runs on the embedded default, the JDBC store on the catalog's own H2
 * database, in lease mode; its subclasses run the same tests in record-after-success mode
 * and on each shared store ({@link SharedStoreEndToEndTests}).
 */
@Import(RequestGate.Configuration.class)
// A duplicate of a running request is answered in flight after this wait (lease mode).
@TestPropertySource(properties = "idempotency.in-flight.wait=PT0.2S")
class IcebergClientRoundTripTests extends CatalogServerTestSupport {

	/** RFC 9562 UUID version 7, variant 0b10. */
	private static final Pattern UUID_V7 = Pattern
		.compile("[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");

	@Autowired
	protected IdempotencyStore store;

	@Autowired
	protected RequestGate gate;

	@Autowired
	private DataSource dataSource;

	protected CatalogHttp http;

	private CatalogProxy proxy;

	private RESTCatalog client;

	@BeforeEach
	void connect() throws Exception {
		this.http = new CatalogHttp(catalogUri());
		this.proxy = CatalogProxy.relaying(catalogUri());
		this.client = connect(this.proxy.uri());
	}

	/** How many records the store holds now. */
	protected long recordsInStore() {
		return JdbcClient.create(this.dataSource)
			.sql("SELECT count(*) FROM idempotency_record")
			.query(Long.class)
			.single();
	}

	/** The store's name in file and object names of this run. */
	protected String storeTag() {
		return this.store.name() + (recordAfterSuccess() ? "_ras" : "_lease");
	}

	@AfterEach
	void close() throws Exception {
		this.client.close();
		this.proxy.close();
	}

	@Test
	void namespaceRoundTrip() {
		Namespace parent = Namespace.of("rt_ns");
		Namespace child = Namespace.of("rt_ns", "child");
		// Iceberg's request builders probe maps with null keys: Map.of() would throw.
		this.client.createNamespace(parent, new HashMap<>(Map.of("owner", "alice")));
		this.client.createNamespace(child);

		assertThat(this.client.namespaceExists(parent)).isTrue();
		assertThat(this.client.listNamespaces(parent)).containsExactly(child);
		assertThat(this.client.loadNamespaceMetadata(parent)).containsEntry("owner", "alice");

		this.client.setProperties(parent, new HashMap<>(Map.of("owner", "bob", "team", "data")));
		this.client.removeProperties(parent, new HashSet<>(Set.of("team")));
		assertThat(this.client.loadNamespaceMetadata(parent)).containsEntry("owner", "bob").doesNotContainKey("team");

		assertThat(this.client.dropNamespace(child)).isTrue();
		assertThat(this.client.dropNamespace(parent)).isTrue();
		assertThat(this.client.namespaceExists(parent)).isFalse();

		assertEveryMutationCarriedItsOwnKey(6);
	}

	@Test
	void tableRoundTrip() {
		Namespace namespace = Namespace.of("rt_tables");
		this.client.createNamespace(namespace);
		TableIdentifier identifier = TableIdentifier.of(namespace, "events");
		Table table = this.client.createTable(identifier, IcebergFixtures.SCHEMA);

		table.updateSchema().addColumn("ts", Types.TimestampType.withZone()).commit();
		table.newAppend().appendFile(IcebergFixtures.dataFile(table)).commit();

		Table loaded = this.client.loadTable(identifier);
		assertThat(loaded.schema().findField("ts")).isNotNull();
		assertThat(loaded.snapshots()).hasSize(1);
		assertThat(loaded.currentSnapshot().summary()).containsEntry("added-data-files", "1");

		TableIdentifier renamed = TableIdentifier.of(namespace, "events_v2");
		this.client.renameTable(identifier, renamed);
		assertThat(this.client.tableExists(identifier)).isFalse();
		assertThat(this.client.listTables(namespace)).containsExactly(renamed);
		assertThat(this.client.loadTable(renamed).currentSnapshot().snapshotId())
			.isEqualTo(loaded.currentSnapshot().snapshotId());

		assertThat(this.client.dropTable(renamed)).isTrue();
		assertThat(this.client.tableExists(renamed)).isFalse();

		// namespace, table, schema, append, rename, drop
		assertEveryMutationCarriedItsOwnKey(6);
	}

	/**
	 * A table unregistered over HTTP with a key of the test's own (Iceberg 1.12.0's
	 * client has no call for it) is gone for the client, and the client registers it
	 * again from the metadata location the unregistration answered, snapshot included.
	 */
	@Test
	void unregisteredTableIsRegisteredAgainByTheClient() {
		Namespace namespace = Namespace.of("rt_unregister");
		this.client.createNamespace(namespace);
		TableIdentifier identifier = TableIdentifier.of(namespace, "moved");
		Table table = this.client.createTable(identifier, IcebergFixtures.SCHEMA);
		table.newAppend().appendFile(IcebergFixtures.dataFile(table)).commit();
		long snapshot = this.client.loadTable(identifier).currentSnapshot().snapshotId();

		Response unregistered = new CatalogHttp(this.proxy.uri()).post(
				"/v1/namespaces/rt_unregister/tables/moved/unregister", "", "Idempotency-Key",
				RESTUtil.idempotencyHeaders().get(RESTUtil.IDEMPOTENCY_KEY_HEADER));
		assertThat(unregistered.status()).as(unregistered.toString()).isEqualTo(200);
		assertThat(this.client.tableExists(identifier)).isFalse();

		Table registered = this.client.registerTable(identifier,
				unregistered.json().path("metadata-location").asText());
		assertThat(registered.currentSnapshot().snapshotId()).isEqualTo(snapshot);
		assertThat(this.client.loadTable(identifier).snapshots()).hasSize(1);

		// namespace, table, append, unregister, register
		assertEveryMutationCarriedItsOwnKey(5);
	}

	@Test
	void viewRoundTrip() {
		Namespace namespace = Namespace.of("rt_views");
		this.client.createNamespace(namespace);
		TableIdentifier identifier = TableIdentifier.of(namespace, "recent");
		this.client.buildView(identifier)
			.withSchema(IcebergFixtures.SCHEMA)
			.withDefaultNamespace(namespace)
			.withQuery("spark", "select id, data from events")
			.create();

		this.client.buildView(identifier)
			.withSchema(IcebergFixtures.SCHEMA)
			.withDefaultNamespace(namespace)
			.withQuery("spark", "select id, data from events where id > 0")
			.replace();
		View view = this.client.loadView(identifier);
		assertThat(view.sqlFor("spark").sql()).isEqualTo("select id, data from events where id > 0");
		assertThat(view.history()).hasSize(2);

		TableIdentifier renamed = TableIdentifier.of(namespace, "recent_v2");
		this.client.renameView(identifier, renamed);
		assertThat(this.client.listViews(namespace)).containsExactly(renamed);
		assertThat(this.client.dropView(renamed)).isTrue();
		assertThat(this.client.viewExists(renamed)).isFalse();

		// namespace, create, replace, rename, drop
		assertEveryMutationCarriedItsOwnKey(5);
	}

	@Test
	void aViewIsRegisteredByTheClientFromItsMetadataFile() {
		Namespace namespace = Namespace.of("rt_register_view");
		this.client.createNamespace(namespace);
		TableIdentifier original = TableIdentifier.of(namespace, "daily");
		this.client.buildView(original)
			.withSchema(IcebergFixtures.SCHEMA)
			.withDefaultNamespace(namespace)
			.withQuery("spark", "select id from events")
			.create();
		String location = this.http.get("/v1/namespaces/rt_register_view/views/daily")
			.json()
			.path("metadata-location")
			.asText();

		TableIdentifier copy = TableIdentifier.of(namespace, "daily_copy");
		View registered = this.client.registerView(copy, location);

		assertThat(registered.sqlFor("spark").sql()).isEqualTo("select id from events");
		assertThat(this.client.loadView(copy).sqlFor("spark").sql()).isEqualTo("select id from events");
		assertThat(this.client.listViews(namespace)).containsExactlyInAnyOrder(original, copy);
		// namespace, create, register
		assertEveryMutationCarriedItsOwnKey(3);
	}

	@Test
	void multiTableTransaction() {
		Namespace namespace = Namespace.of("rt_tx");
		this.client.createNamespace(namespace);
		TableIdentifier orders = TableIdentifier.of(namespace, "orders");
		TableIdentifier payments = TableIdentifier.of(namespace, "payments");
		this.client.createTable(orders, IcebergFixtures.SCHEMA);
		this.client.createTable(payments, IcebergFixtures.SCHEMA);

		this.client.commitTransaction(IcebergFixtures.appendInTransaction(this.client, orders),
				IcebergFixtures.appendInTransaction(this.client, payments));

		assertThat(this.client.loadTable(orders).snapshots()).hasSize(1);
		assertThat(this.client.loadTable(payments).snapshots()).hasSize(1);

		List<CatalogProxy.Exchange> commits = this.proxy.mutations()
			.stream()
			.filter(exchange -> exchange.path().endsWith("/transactions/commit"))
			.toList();
		assertThat(commits).singleElement().satisfies(commit -> assertThat(commit.status()).isEqualTo(204));
		// namespace, two tables, one transaction
		assertEveryMutationCarriedItsOwnKey(4);
	}

	/**
	 * A retry (same key, same request) that arrives while the first attempt's operation
	 * is held inside the controller. Lease mode: the first attempt reserved the key, so
	 * the retry is told the request is in flight (503 + Retry-After in this sample) and
	 * never runs. Record-after-success: nothing was written before the operation, so the
	 * retry runs it and records its answer; the first attempt, released afterwards, finds
	 * the namespace taken but is answered with the recorded answer, as a replay, and so
	 * is every later retry: one key, one answer.
	 */
	@Test
	void aRetryWhileTheFirstAttemptRunsIsAnsweredAsTheModePromises() throws Exception {
		String key = RESTUtil.idempotencyHeaders().get(RESTUtil.IDEMPOTENCY_KEY_HEADER);
		String body = "{\"namespace\":[\"held_" + storeTag() + "\"]}";
		long before = recordsInStore();
		long answeredRecordedBefore = executions("answered_recorded");
		RequestGate.Hold hold = this.gate.holdFirst(key);
		CompletableFuture<Response> first = CompletableFuture
			.supplyAsync(() -> this.http.post("/v1/namespaces", body, "Idempotency-Key", key));
		Response retry;
		long recordsWhileRunning;
		try {
			hold.awaitEntered();
			recordsWhileRunning = recordsInStore();
			retry = this.http.post("/v1/namespaces", body, "Idempotency-Key", key);
		}
		finally {
			hold.release();
		}
		Response firstAnswer = first.get();
		Response later = this.http.post("/v1/namespaces", body, "Idempotency-Key", key);

		if (recordAfterSuccess()) {
			assertThat(recordsWhileRunning).as("nothing is written before the operation").isEqualTo(before);
			assertThat(retry.status()).as("the retry ran the operation itself").isEqualTo(200);
			assertThat(retry.header("Idempotent-Replayed")).isNull();
			assertThat(firstAnswer.status()).as("the first attempt gets the answer recorded first").isEqualTo(200);
			assertThat(firstAnswer.header("Idempotent-Replayed")).isEqualTo("true");
			assertThat(firstAnswer.body()).isEqualTo(retry.body());
			assertThat(later.body()).isEqualTo(retry.body());
			assertThat(executions("answered_recorded") - answeredRecordedBefore)
				.as("the first attempt was answered with the recorded answer")
				.isEqualTo(1);
		}
		else {
			assertThat(recordsWhileRunning).as("the first attempt reserved the key").isEqualTo(before + 1);
			assertThat(retry.status()).as("the retry is told the first attempt is in flight").isEqualTo(503);
			assertThat(retry.errorType()).isEqualTo("IdempotentRequestInFlightException");
			assertThat(retry.header("Retry-After")).isNotNull();
			assertThat(firstAnswer.status()).isEqualTo(200);
			assertThat(firstAnswer.header("Idempotent-Replayed")).isNull();
			assertThat(later.body()).isEqualTo(firstAnswer.body());
		}
		assertThat(later.status()).isEqualTo(200);
		assertThat(later.header("Idempotent-Replayed")).isEqualTo("true");
		assertThat(recordsInStore()).as("one record for the key").isEqualTo(before + 1);
		assertRanInTheConfiguredMode(1);
	}

	private void assertEveryMutationCarriedItsOwnKey(int expectedMutations) {
		List<CatalogProxy.Exchange> mutations = this.proxy.mutations();
		assertThat(mutations).as("mutations seen by the catalog").hasSize(expectedMutations);
		assertThat(mutations)
			.allSatisfy(exchange -> assertThat(exchange.idempotencyKey()).as(exchange.toString()).matches(UUID_V7));
		assertThat(mutations.stream().map(CatalogProxy.Exchange::idempotencyKey).distinct()).hasSize(expectedMutations);
		assertRanInTheConfiguredMode(expectedMutations);
	}

}
