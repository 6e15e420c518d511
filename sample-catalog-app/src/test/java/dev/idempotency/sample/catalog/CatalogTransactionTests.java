package dev.idempotency.sample.catalog;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import javax.sql.DataSource;

import dev.idempotency.autoconfigure.jdbc.IdempotencyJdbcDataSource;
import dev.idempotency.sample.catalog.support.CatalogHttp;
import dev.idempotency.sample.catalog.support.CatalogProxy;
import dev.idempotency.sample.catalog.support.CatalogServerTestSupport;
import dev.idempotency.sample.catalog.support.IcebergFixtures;
import dev.idempotency.store.CompletedRecordRequest;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.StoredResponse;
import org.apache.iceberg.MetadataUpdate;
import org.apache.iceberg.Snapshot;
import org.apache.iceberg.Table;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableCommit;
import org.apache.iceberg.catalog.TableIdentifier;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.jdbc.JdbcCatalog;
import org.apache.iceberg.rest.RESTCatalog;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * The catalog and the JDBC idempotency store on the application's one database, as the
 * sample is configured, here the embedded default's H2
 * ({@link CatalogTransactionOnPostgresTests}: PostgreSQL,
 * {@link CatalogTransactionOnMariaDbTests}: MariaDB, each a database of its own), with
 * Iceberg's own 1.12.0 client:
 * <ul>
 * <li>{@code POST /v1/{prefix}/transactions/commit} is atomic: when a concurrent writer
 * wins on the second of three tables after the catalog checked the transaction and before
 * it swapped that table's pointer, no table changes and the client gets 409
 * {@code CommitFailedException}. The concurrent writer is let in at that exact moment
 * without any sleep: the test holds a row lock on the first table's catalog row, so the
 * commit (requirements checked, first swap under way) waits on it; the test sees it wait,
 * lets another Iceberg client commit to the second table, and lets go.</li>
 * <li>A concurrent change that the transaction's requirements allow (a property on the
 * second table) does not fail it: the commit runs again on the tables as they are and all
 * three change.</li>
 * <li>A lost response to the transaction is replayed to the client's retry, and each
 * table has exactly one new snapshot.</li>
 * <li>Inside a Spring transaction the catalog's rows and an idempotency record commit or
 * roll back together.</li>
 * </ul>
 */
@DirtiesContext(classMode = DirtiesContext.ClassMode.AFTER_CLASS)
class CatalogTransactionTests extends CatalogServerTestSupport {

	@Autowired
	private DataSource dataSource;

	@Autowired
	private JdbcCatalog catalog;

	@Autowired
	private IdempotencyStore store;

	@Autowired
	private IdempotencyJdbcDataSource storeDataSource;

	@Autowired
	private PlatformTransactionManager transactionManager;

	private CatalogProxy proxy;

	private RESTCatalog client;

	private RESTCatalog concurrentWriter;

	/** The catalog's database as its JDBC driver names it. */
	String expectedDatabase() {
		return "H2";
	}

	@Test
	void theCatalogAndTheStoreShareTheApplicationsDataSource() throws SQLException {
		try (Connection connection = this.dataSource.getConnection()) {
			assertThat(connection.getMetaData().getDatabaseProductName()).isEqualTo(expectedDatabase());
		}
		assertThat(this.store.name()).isEqualTo("jdbc");
		assertThat(this.storeDataSource.getDataSource()).isSameAs(this.dataSource);
	}

	@BeforeEach
	void connectClients() throws Exception {
		this.proxy = CatalogProxy.relaying(catalogUri());
		this.client = connect(this.proxy.uri());
		this.concurrentWriter = connect(catalogUri());
	}

	@AfterEach
	void closeClients() throws Exception {
		this.client.close();
		this.concurrentWriter.close();
		this.proxy.close();
	}

	@Test
	void aConflictOnTheSecondTableLeavesNoTableChanged() throws Exception {
		List<TableIdentifier> tables = threeTablesWithOneSnapshotEach("tx_conflict");
		Map<TableIdentifier, Long> before = currentSnapshots(tables);
		List<TableCommit> commits = stageAnAppendToEach(tables);

		CompletableFuture<Void> commit = whileTheCommitWaitsOnTheFirstTable(tables.get(0), commits, () -> {
			Table second = this.concurrentWriter.loadTable(tables.get(1));
			second.newAppend().appendFile(IcebergFixtures.dataFile(second)).commit();
		});

		assertThatThrownBy(() -> commit.get(1, TimeUnit.MINUTES)).hasCauseInstanceOf(CommitFailedException.class);
		CatalogProxy.Exchange answer = transactionCommits().get(0);
		assertThat(answer.status()).isEqualTo(409);
		assertThat(answer.responseBody()).contains("\"type\":\"CommitFailedException\"");
		assertThat(snapshots(tables.get(0))).as("first table").containsExactly(before.get(tables.get(0)));
		assertThat(snapshots(tables.get(2))).as("third table").containsExactly(before.get(tables.get(2)));
		List<Long> second = snapshots(tables.get(1));
		assertThat(second).as("second table: its first snapshot and the concurrent writer's").hasSize(2);
		assertThat(second).doesNotContain(stagedSnapshot(commits.get(1)));

		// The client's retry with the same key. Lease mode records the 409 (a 4xx is the
		// operation's answer): it is replayed. Record-after-success records successes
		// only: the transaction runs again, and fails again on the same requirement.
		CatalogHttp.Response retry = new CatalogHttp(catalogUri()).post(answer.path(), answer.requestBody(),
				"Idempotency-Key", answer.idempotencyKey());
		assertThat(retry.status()).isEqualTo(409);
		assertThat(retry.errorType()).isEqualTo("CommitFailedException");
		if (recordAfterSuccess()) {
			assertThat(retry.header("Idempotent-Replayed")).as("ran again").isNull();
		}
		else {
			assertThat(retry.header("Idempotent-Replayed")).isEqualTo("true");
			assertThat(retry.body()).isEqualTo(answer.responseBody());
		}
		assertThat(snapshots(tables.get(0))).as("first table after the retry")
			.containsExactly(before.get(tables.get(0)));
		assertThat(snapshots(tables.get(1))).as("second table after the retry").isEqualTo(second);
		assertThat(snapshots(tables.get(2))).as("third table after the retry")
			.containsExactly(before.get(tables.get(2)));
	}

	@Test
	void aConcurrentChangeTheRequirementsAllowIsCommittedBesideTheTransaction() throws Exception {
		List<TableIdentifier> tables = threeTablesWithOneSnapshotEach("tx_retry");
		List<TableCommit> commits = stageAnAppendToEach(tables);

		CompletableFuture<Void> commit = whileTheCommitWaitsOnTheFirstTable(tables.get(0), commits,
				() -> this.concurrentWriter.loadTable(tables.get(1)).updateProperties().set("owner", "bob").commit());

		commit.get(1, TimeUnit.MINUTES);
		assertThat(transactionCommits()).singleElement()
			.satisfies(exchange -> assertThat(exchange.status()).isEqualTo(204));
		for (TableIdentifier table : tables) {
			assertThat(snapshots(table)).as(table.toString()).hasSize(2);
		}
		assertThat(this.concurrentWriter.loadTable(tables.get(1)).properties()).containsEntry("owner", "bob");
	}

	@Test
	void aLostResponseIsReplayedAndEveryTableHasOneNewSnapshot() throws Exception {
		List<TableIdentifier> tables = threeTablesWithOneSnapshotEach("tx_lost");
		try (CatalogProxy lossy = CatalogProxy.losingFirstResponses(catalogUri());
				RESTCatalog lossyClient = connect(lossy.uri())) {
			List<TableCommit> commits = new ArrayList<>();
			for (TableIdentifier table : tables) {
				commits.add(IcebergFixtures.appendInTransaction(lossyClient, table));
			}
			lossyClient.commitTransaction(commits);

			List<CatalogProxy.Exchange> attempts = lossy.mutations()
				.stream()
				.filter(exchange -> exchange.path().endsWith("/transactions/commit"))
				.toList();
			assertThat(attempts).hasSize(2);
			assertThat(attempts.get(0).lost()).isTrue();
			assertThat(attempts.get(0).status()).isEqualTo(204);
			assertThat(attempts.get(1).idempotencyKey()).isEqualTo(attempts.get(0).idempotencyKey());
			assertThat(attempts.get(1).status()).isEqualTo(204);
			assertThat(attempts.get(1).replayed()).as("the retry is answered from the store").isTrue();
		}
		for (TableIdentifier table : tables) {
			assertThat(snapshots(table)).as(table + ": its first snapshot and one new").hasSize(2);
		}
	}

	@Test
	void inASpringTransactionTheCatalogRowsAndTheRecordCommitOrRollBackTogether() {
		TransactionTemplate transaction = new TransactionTemplate(this.transactionManager);
		RecordId rolledBack = new RecordId("test", "rolled-back-" + System.nanoTime());
		Namespace rolledBackNamespace = Namespace.of("one_commit_rolled_back");
		assertThatThrownBy(() -> transaction.executeWithoutResult(status -> {
			this.catalog.createNamespace(rolledBackNamespace);
			assertThat(this.store.recordCompleted(completed(rolledBack))).isEmpty();
			throw new IllegalStateException("the business fails after both writes");
		})).hasMessage("the business fails after both writes");
		assertThat(this.catalog.namespaceExists(rolledBackNamespace)).isFalse();
		assertThat(this.store.find(rolledBack)).isEmpty();

		RecordId committed = new RecordId("test", "committed-" + System.nanoTime());
		Namespace committedNamespace = Namespace.of("one_commit_committed");
		transaction.executeWithoutResult(status -> {
			this.catalog.createNamespace(committedNamespace);
			assertThat(this.store.recordCompleted(completed(committed))).isEmpty();
		});
		assertThat(this.catalog.namespaceExists(committedNamespace)).isTrue();
		assertThat(this.store.find(committed)).isPresent();
	}

	private static long stagedSnapshot(TableCommit commit) {
		return commit.updates()
			.stream()
			.filter(MetadataUpdate.AddSnapshot.class::isInstance)
			.map(update -> ((MetadataUpdate.AddSnapshot) update).snapshot().snapshotId())
			.findFirst()
			.orElseThrow();
	}

	private static CompletedRecordRequest completed(RecordId id) {
		return new CompletedRecordRequest(id, "0".repeat(64), "createNamespace",
				new StoredResponse(200, Map.of(), "{}".getBytes(StandardCharsets.UTF_8)), Duration.ofMinutes(5));
	}

	/**
	 * Sends the transaction while the test holds a row lock on the first table's catalog
	 * row, waits until the commit is blocked on it (the transaction was checked and its
	 * first pointer swap is under way), runs the concurrent writer, and lets go.
	 */
	private CompletableFuture<Void> whileTheCommitWaitsOnTheFirstTable(TableIdentifier first, List<TableCommit> commits,
			Runnable concurrentWriter) throws Exception {
		try (Connection lock = this.dataSource.getConnection()) {
			lock.setAutoCommit(false);
			try (PreparedStatement statement = lock.prepareStatement(
					// The whole primary key: on MariaDB a lock query without catalog_name
					// cannot use it and locks every row it scans.
					"SELECT metadata_location FROM iceberg_tables WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? FOR UPDATE")) {
				statement.setString(1, this.catalog.name());
				statement.setString(2, first.namespace().toString());
				statement.setString(3, first.name());
				try (ResultSet row = statement.executeQuery()) {
					assertThat(row.next()).as("catalog row of " + first).isTrue();
				}
			}
			CompletableFuture<Void> commit = CompletableFuture.runAsync(() -> this.client.commitTransaction(commits));
			try {
				awaitASessionBlockedBy(lock, commit);
				concurrentWriter.run();
			}
			finally {
				lock.rollback();
			}
			return commit;
		}
	}

	private void awaitASessionBlockedBy(Connection lock, CompletableFuture<Void> commit) throws Exception {
		String product = lock.getMetaData().getDatabaseProductName();
		long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
		while (true) {
			if ("MariaDB".equals(product) ? anotherSessionOfTheDatabaseWaitsForALock(lock)
					: aSessionIsBlockedBy(lock, product)) {
				return;
			}
			if (commit.isDone()) {
				commit.join();
				throw new IllegalStateException("the commit finished without waiting on the first table");
			}
			if (System.nanoTime() > deadline) {
				throw new IllegalStateException("the commit never waited on the first table's row lock");
			}
			Thread.sleep(10);
		}
	}

	/** Whether a session waits on a lock that {@code lock}'s session holds. */
	private static boolean aSessionIsBlockedBy(Connection lock, String product) throws SQLException {
		String sql = switch (product) {
			case "H2" -> "SELECT count(*) FROM information_schema.sessions WHERE blocker_id = SESSION_ID()";
			case "PostgreSQL" ->
				"SELECT count(*) FROM pg_stat_activity WHERE pg_backend_pid() = ANY(pg_blocking_pids(pid))";
			default -> throw new SQLException("no blocked-session query for " + product);
		};
		try (Statement statement = lock.createStatement(); ResultSet count = statement.executeQuery(sql)) {
			count.next();
			return count.getLong(1) > 0;
		}
	}

	/**
	 * MariaDB: whether another session on this test's database (the application's, read
	 * live from {@code PROCESSLIST}) waits for a lock, as
	 * {@code SHOW ENGINE INNODB STATUS} shows it: each transaction there is a block that
	 * starts with {@code ---TRANSACTION}, has a {@code LOCK WAIT} line while it waits and
	 * names its session ({@code MariaDB thread id 24, ...}). While the test holds the
	 * first table's row, the only lock another session of this database can wait for is
	 * that one: the commit's.
	 * <p>
	 * Not {@code information_schema.INNODB_TRX} or {@code INNODB_LOCK_WAITS}: InnoDB
	 * reads those from one snapshot for the whole server that it refreshes only when
	 * nobody has read it for 100 ms, so polled every 10 ms it stayed at the snapshot of
	 * the first read, taken before the commit began to wait, and the test failed with
	 * "the commit never waited on the first table's row lock" (as in
	 * {@code MariaDbJdbcIdempotencyStoreTests}, where the witness is explained).
	 */
	private static boolean anotherSessionOfTheDatabaseWaitsForALock(Connection lock) throws SQLException {
		List<Long> sessions = new ArrayList<>();
		try (Statement statement = lock.createStatement();
				ResultSet ids = statement.executeQuery("SELECT id FROM information_schema.processlist"
						+ " WHERE db = DATABASE() AND id <> CONNECTION_ID()")) {
			while (ids.next()) {
				sessions.add(ids.getLong(1));
			}
		}
		String status;
		try (Statement statement = lock.createStatement();
				ResultSet row = statement.executeQuery("SHOW ENGINE INNODB STATUS")) {
			row.next();
			status = row.getString("Status");
		}
		return Arrays.stream(status.split("\n---TRANSACTION "))
			.filter(transaction -> transaction.contains("\nLOCK WAIT "))
			.anyMatch(transaction -> sessions.stream()
				.anyMatch(session -> transaction.contains(" thread id " + session + ",")));
	}

	private List<TableIdentifier> threeTablesWithOneSnapshotEach(String name) {
		Namespace namespace = Namespace.of(name);
		this.client.createNamespace(namespace, new HashMap<>());
		List<TableIdentifier> tables = new ArrayList<>();
		for (String table : List.of("orders", "payments", "shipments")) {
			TableIdentifier identifier = TableIdentifier.of(namespace, table);
			Table created = this.client.createTable(identifier, IcebergFixtures.SCHEMA);
			created.newAppend().appendFile(IcebergFixtures.dataFile(created)).commit();
			tables.add(identifier);
		}
		return tables;
	}

	private List<TableCommit> stageAnAppendToEach(List<TableIdentifier> tables) {
		return tables.stream().map(table -> IcebergFixtures.appendInTransaction(this.client, table)).toList();
	}

	private Map<TableIdentifier, Long> currentSnapshots(List<TableIdentifier> tables) {
		Map<TableIdentifier, Long> current = new HashMap<>();
		tables.forEach(
				table -> current.put(table, this.concurrentWriter.loadTable(table).currentSnapshot().snapshotId()));
		return current;
	}

	private List<Long> snapshots(TableIdentifier table) {
		List<Long> ids = new ArrayList<>();
		for (Snapshot snapshot : this.concurrentWriter.loadTable(table).snapshots()) {
			ids.add(snapshot.snapshotId());
		}
		return ids;
	}

	private List<CatalogProxy.Exchange> transactionCommits() {
		return this.proxy.mutations()
			.stream()
			.filter(exchange -> exchange.path().endsWith("/transactions/commit"))
			.toList();
	}

}
