package dev.idempotency.store.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import javax.sql.DataSource;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.autoconfigure.jdbc.JdbcStoreTestSupport;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.IdempotencyStoreException;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.RecordState;
import dev.idempotency.store.ReserveResult;
import dev.idempotency.store.StoredResponse;
import dev.idempotency.store.contract.IdempotencyStoreContractTests;
import dev.idempotency.test.servers.JdbcTestDatabase;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.AbstractDataSource;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.SingleConnectionDataSource;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.within;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * The store contract on one database, plus what only a database store has: dialect
 * detection, the Liquibase schema, batched purge, transaction isolation from the caller
 * and the database clock. Each subclass names its database; the database (a schema or
 * database of its own on the shared server) is made once per class and dropped
 * afterwards.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AbstractJdbcIdempotencyStoreTests extends IdempotencyStoreContractTests {

	static final String TABLE = "idempotency_record";

	/** The answer a schema test stores and expects to find again. */
	private static final StoredResponse KEPT = response(201, "{\"kept\":true}");

	/** How often {@code awaitLockWait} asks the database whether a session waits. */
	private static final long LOCK_WAIT_POLL_MILLIS = 20;

	/** 64 racing threads share these; a reservation holds a connection only briefly. */
	private static final int POOL_SIZE = 20;

	protected JdbcTestDatabase database;

	protected HikariDataSource dataSource;

	/** The test database, not yet created. */
	protected abstract JdbcTestDatabase testDatabase();

	/** The dialect the database must be detected as. */
	protected abstract JdbcIdempotencyDialect expectedDialect();

	@BeforeAll
	void createDatabase() throws Exception {
		this.database = testDatabase().create();
		this.dataSource = this.database.dataSource(POOL_SIZE);
		assertThat(createSchema(TABLE)).isTrue();
	}

	@AfterAll
	void dropDatabase() throws Exception {
		try {
			if (this.dataSource != null) {
				this.dataSource.close();
			}
		}
		finally {
			if (this.database != null) {
				this.database.drop();
			}
		}
	}

	@Override
	protected IdempotencyStore createStore() {
		return store(this.dataSource, TABLE, false);
	}

	/**
	 * Over a pool that gets no connection, as Hikari's when the database cannot be
	 * reached.
	 */
	@Override
	protected IdempotencyStore createUnreachableStore() {
		return store(new AbstractDataSource() {

			@Override
			public Connection getConnection() throws SQLException {
				throw new SQLTransientConnectionException("the database cannot be reached");
			}

			@Override
			public Connection getConnection(String username, String password) throws SQLException {
				return getConnection();
			}

		}, TABLE, false);
	}

	protected JdbcIdempotencyStore store(DataSource dataSource, String table, boolean transactionalCompletion) {
		return JdbcIdempotencyStore.builder(dataSource)
			.dialect(expectedDialect())
			.tableName(table)
			.transactionalCompletion(transactionalCompletion)
			.queryTimeout(Duration.ZERO)
			.reserveCommit(JdbcIdempotencyStore.ReserveCommit.OFF)
			.build();
	}

	/** Applies the starter's changelog for this table, as the auto-configuration does. */
	protected boolean createSchema(String table) throws Exception {
		return JdbcStoreTestSupport.createSchema(this.dataSource, table);
	}

	protected JdbcClient jdbc() {
		return JdbcClient.create(this.dataSource);
	}

	@Test
	void theDialectIsDetectedFromTheDatabase() {
		assertThat(JdbcIdempotencyDialect.detect(this.dataSource)).isEqualTo(expectedDialect());
		assertThat(JdbcIdempotencyStore.builder(this.dataSource)
			.tableName(TABLE)
			.transactionalCompletion(false)
			.queryTimeout(Duration.ZERO)
			.reserveCommit(JdbcIdempotencyStore.ReserveCommit.OFF)
			.build()
			.dialect()).isEqualTo(expectedDialect());
	}

	/**
	 * A statement that cannot finish (here: its row locked by another transaction that
	 * never ends) is ended by the store's timeout (the network timeout of its connection;
	 * on H2, which has none, the query timeout), and the call fails as a store failure
	 * instead of holding the request.
	 */
	@Test
	void aStatementThatCannotFinishIsCancelledByTheQueryTimeout() throws Exception {
		JdbcIdempotencyStore timed = JdbcIdempotencyStore.builder(this.dataSource)
			.dialect(expectedDialect())
			.tableName(TABLE)
			.transactionalCompletion(false)
			.queryTimeout(Duration.ofSeconds(1))
			.reserveCommit(JdbcIdempotencyStore.ReserveCommit.OFF)
			.build();
		RecordId id = newId();
		String owner = token();
		timed.reserve(request(id, "fp", owner, LONG_LEASE));
		try (Connection locker = this.dataSource.getConnection()) {
			locker.setAutoCommit(false);
			try (PreparedStatement lock = locker
				.prepareStatement("SELECT state FROM " + TABLE + " WHERE scope = ? AND idem_key = ? FOR UPDATE")) {
				lock.setString(1, id.scope());
				lock.setString(2, id.key());
				lock.executeQuery().close();
			}
			assertTimeoutPreemptively(Duration.ofSeconds(15),
					() -> assertThatExceptionOfType(IdempotencyStoreException.class)
						.isThrownBy(() -> timed.complete(id, owner, response(200, "{}"))));
			locker.rollback();
		}
		// The statement the store gave up on may still be waiting for the lock on the
		// server, and complete the record once the lock is gone: either it or this call
		// completes it, once.
		timed.complete(id, owner, response(200, "{}"));
		assertThat(timed.find(id)).hasValueSatisfying((record) -> {
			assertThat(record.state()).isEqualTo(RecordState.COMPLETED);
			assertThat(record.response().status()).isEqualTo(200);
		});
	}

	/**
	 * On a data source shared with the application, the store's network timeout is the
	 * store's only while it holds a connection: the connection gets its own timeout back,
	 * also after a call that joined the application's transaction. (A single connection
	 * whose close does nothing, so that no pool resets it in the store's place.)
	 */
	@Test
	void aSharedConnectionGetsItsOwnNetworkTimeoutBackAfterEachStoreCall() throws Exception {
		try (Connection connection = this.dataSource.getConnection()) {
			connection.setNetworkTimeout(Runnable::run, 7000);
			int own = connection.getNetworkTimeout();
			SingleConnectionDataSource shared = new SingleConnectionDataSource(connection, true);
			JdbcIdempotencyStore timed = JdbcIdempotencyStore.builder(shared)
				.dialect(expectedDialect())
				.tableName(TABLE)
				.transactionalCompletion(true)
				.queryTimeout(Duration.ofSeconds(1))
				.reserveCommit(JdbcIdempotencyStore.ReserveCommit.OFF)
				.build();
			RecordId id = newId();
			String owner = token();
			assertThat(timed.reserve(request(id, "fp", owner, LONG_LEASE))).isInstanceOf(ReserveResult.Acquired.class);
			assertThat(connection.getNetworkTimeout()).isEqualTo(own);
			Boolean completed = new TransactionTemplate(new DataSourceTransactionManager(shared))
				.execute((status) -> timed.complete(id, owner, response(200, "{}")));
			assertThat(completed).isTrue();
			assertThat(connection.getNetworkTimeout()).isEqualTo(own);
			assertThat(timed.find(id))
				.hasValueSatisfying((record) -> assertThat(record.state()).isEqualTo(RecordState.COMPLETED));
			assertThat(connection.getNetworkTimeout()).isEqualTo(own);
		}
	}

	/**
	 * What an operator reads in the health endpoint when the table was dropped under the
	 * store.
	 */
	@Test
	void aMissingTableIsNamedInTheStoresFailure() {
		// The health indicator's "error" detail is this exception
		// (IdempotencyStoreHealthIndicatorTests).
		JdbcIdempotencyStore missing = store(this.dataSource, "no_such_table", false);
		assertThatExceptionOfType(IdempotencyStoreException.class).isThrownBy(() -> missing.find(newId()))
			.withMessageContaining("table no_such_table not found");
	}

	@Test
	void purgeDeletesExpiredRecordsInBatchesUntilABatchComesBackShort() throws Exception {
		String table = "purge_probe";
		createSchema(table);
		JdbcIdempotencyStore purging = store(this.dataSource, table, false);
		List<RecordId> expired = fill(purging, 25, SHORT_LEASE);
		List<RecordId> live = fill(purging, 3, LONG_LEASE);
		elapse(SHORT_LEASE);

		assertThat(List.of(purging.purgeExpired(10), purging.purgeExpired(10), purging.purgeExpired(10),
				purging.purgeExpired(10)))
			.containsExactly(10, 10, 5, 0);
		assertThat(rowCount(table)).isEqualTo(3);
		live.forEach((id) -> assertThat(purging.find(id)).isPresent());
		expired.forEach((id) -> assertThat(purging.find(id)).isEmpty());

		fill(purging, 12, SHORT_LEASE);
		elapse(SHORT_LEASE);
		assertThat(JdbcStoreTestSupport.purgeOnce(purging, 5)).as("one scheduled run loops 5, 5, 2").isEqualTo(12);
		assertThat(rowCount(table)).isEqualTo(3);
	}

	private List<RecordId> fill(IdempotencyStore target, int count, Duration retention) {
		List<RecordId> ids = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			RecordId id = newId();
			String owner = token();
			target.reserve(request(id, "fp", owner, retention, retention));
			assertThat(target.complete(id, owner, response(200, "{}"))).isTrue();
			ids.add(id);
		}
		return ids;
	}

	private int rowCount(String table) {
		return jdbc().sql("SELECT COUNT(*) FROM " + table).query(Integer.class).single();
	}

	@Test
	void theSchemaIsCreatedOnceAndApplyingItAgainChangesNothing() throws Exception {
		String table = "liquibase_probe";
		RecordId id = newId();
		JdbcIdempotencyStore probe = schemaHolding(table, id);

		assertThat(createSchema(table)).isTrue();

		assertThat(probe.find(id).orElseThrow().response()).isEqualTo(KEPT);
		assertThat(jdbc().sql("SELECT COUNT(*) FROM " + JdbcStoreTestSupport.CHANGELOG_TABLE + " WHERE id = :id")
			.param("id", "idempotency-record-table-" + table)
			.query(Integer.class)
			.single()).as("the change set for this table ran once").isEqualTo(1);
	}

	/**
	 * A table made by a changelog without the key's index (an earlier version of the
	 * starter) gets the index when the changelog runs again; its records stay as they
	 * were and are found by their key alone.
	 */
	@Test
	void aTableMadeBeforeTheKeyIndexGetsItAndItsRecordsAreFoundByKey() throws Exception {
		String table = "key_index_probe";
		RecordId id = newId();
		JdbcIdempotencyStore probe = schemaHolding(table, id);
		assertThat(indexes(table)).as("made with the table").contains(table + "_key_idx");
		jdbc()
			.sql("DROP INDEX " + table + "_key_idx"
					+ ((expectedDialect() == JdbcIdempotencyDialect.MARIADB) ? " ON " + table : ""))
			.update();
		jdbc().sql("DELETE FROM " + JdbcStoreTestSupport.CHANGELOG_TABLE + " WHERE id = :id")
			.param("id", "idempotency-record-key-index-" + table)
			.update();
		assertThat(indexes(table)).doesNotContain(table + "_key_idx");

		assertThat(createSchema(table)).isTrue();

		assertThat(indexes(table)).contains(table + "_key_idx");
		assertThat(probe.find(id).orElseThrow().response()).isEqualTo(KEPT);
		assertThat(probe.inspectByKey(id.key(), 10)).extracting((inspected) -> inspected.record().id())
			.containsExactly(id);
	}

	/**
	 * Applies the starter's changelog for {@code table}, and completes {@code id} there
	 * with {@link #KEPT}.
	 * @return a store on the table
	 */
	private JdbcIdempotencyStore schemaHolding(String table, RecordId id) throws Exception {
		assertThat(createSchema(table)).isTrue();
		JdbcIdempotencyStore probe = store(this.dataSource, table, false);
		String owner = token();
		probe.reserve(request(id, "fp", owner, LONG_LEASE));
		probe.complete(id, owner, KEPT);
		return probe;
	}

	/** The indexes of a table, by lower-case name, whatever case the database keeps. */
	private List<String> indexes(String table) throws Exception {
		List<String> names = new ArrayList<>();
		try (Connection connection = this.dataSource.getConnection()) {
			for (String name : List.of(table, table.toUpperCase(java.util.Locale.ROOT))) {
				try (java.sql.ResultSet rs = connection.getMetaData()
					.getIndexInfo(connection.getCatalog(), connection.getSchema(), name, false, false)) {
					while (rs.next()) {
						String index = rs.getString("INDEX_NAME");
						if (index != null) {
							names.add(index.toLowerCase(java.util.Locale.ROOT));
						}
					}
				}
			}
		}
		return names;
	}

	@Test
	void storeCallsNeverJoinTheCallersTransaction() {
		RecordId id = newId();
		RecordId recorded = newId();
		String owner = token();
		TransactionTemplate caller = new TransactionTemplate(new DataSourceTransactionManager(this.dataSource));
		caller.executeWithoutResult((status) -> {
			assertThat(this.store.reserve(request(id, "fp", owner, LONG_LEASE)))
				.isInstanceOf(ReserveResult.Acquired.class);
			// An existing key is an ordinary outcome, not an error that would poison the
			// caller's transaction.
			assertThat(this.store.reserve(request(id, "fp", token(), LONG_LEASE)))
				.isInstanceOf(ReserveResult.Existing.class);
			assertThat(this.store.complete(id, owner, response(201, "{}"))).isTrue();
			assertThat(this.store.recordCompleted(completed(recorded, "fp", response(201, "{}"), RETENTION))).isEmpty();
			assertThat(this.store.recordCompleted(completed(recorded, "fp", response(200, "{}"), RETENTION)))
				.as("a recorded key is an ordinary outcome too")
				.isPresent();
			assertThat(jdbc().sql("SELECT 1 FROM " + TABLE + " WHERE idem_key = :key")
				.param("key", id.key())
				.query(Integer.class)
				.single()).as("the caller's transaction is still usable").isEqualTo(1);
			status.setRollbackOnly();
		});
		assertThat(this.store.find(id).orElseThrow().state()).as("committed on its own")
			.isEqualTo(RecordState.COMPLETED);
		assertThat(this.store.find(recorded).orElseThrow().response()).as("recorded on its own")
			.isEqualTo(response(201, "{}"));
	}

	@Test
	void transactionalCompletionCommitsAndRollsBackWithTheCallersTransaction() {
		JdbcIdempotencyStore joining = store(this.dataSource, TABLE, true);
		TransactionTemplate caller = new TransactionTemplate(new DataSourceTransactionManager(this.dataSource));

		RecordId rolledBack = newId();
		String firstOwner = token();
		joining.reserve(request(rolledBack, "fp", firstOwner, LONG_LEASE));
		caller.executeWithoutResult((status) -> {
			assertThat(joining.complete(rolledBack, firstOwner, response(201, "{}"))).isTrue();
			status.setRollbackOnly();
		});
		IdempotencyRecord afterRollback = joining.find(rolledBack).orElseThrow();
		assertThat(afterRollback.state()).as("the completion rolled back with the business write")
			.isEqualTo(RecordState.IN_PROGRESS);

		RecordId committed = newId();
		String secondOwner = token();
		joining.reserve(request(committed, "fp", secondOwner, LONG_LEASE));
		caller.executeWithoutResult(
				(status) -> assertThat(joining.complete(committed, secondOwner, response(201, "{}"))).isTrue());
		assertThat(joining.find(committed).orElseThrow().state()).isEqualTo(RecordState.COMPLETED);

		RecordId outside = newId();
		String thirdOwner = token();
		joining.reserve(request(outside, "fp", thirdOwner, LONG_LEASE));
		assertThat(joining.complete(outside, thirdOwner, response(200, "{}"))).as("no transaction: its own").isTrue();
		assertThat(joining.find(outside).orElseThrow().state()).isEqualTo(RecordState.COMPLETED);
	}

	@Test
	void transactionalCompletionRecordsWithTheCallersTransaction() {
		JdbcIdempotencyStore joining = store(this.dataSource, TABLE, true);
		TransactionTemplate caller = new TransactionTemplate(new DataSourceTransactionManager(this.dataSource));

		RecordId rolledBack = newId();
		caller.executeWithoutResult((status) -> {
			assertThat(joining.recordCompleted(completed(rolledBack, "fp", response(201, "{}"), RETENTION))).isEmpty();
			status.setRollbackOnly();
		});
		assertThat(joining.find(rolledBack)).as("the recording rolled back with the business write").isEmpty();

		RecordId committed = newId();
		caller.executeWithoutResult((status) -> assertThat(
				joining.recordCompleted(completed(committed, "fp", response(201, "{\"kept\":1}"), RETENTION)))
			.isEmpty());
		assertThat(joining.find(committed).orElseThrow().response()).isEqualTo(response(201, "{\"kept\":1}"));
		caller.executeWithoutResult((status) -> assertThat(
				joining.recordCompleted(completed(committed, "fp", response(200, "{\"again\":1}"), RETENTION)))
			.as("a live record is returned inside the caller's transaction too")
			.hasValueSatisfying((record) -> assertThat(record.response()).isEqualTo(response(201, "{\"kept\":1}"))));

		RecordId outside = newId();
		assertThat(joining.recordCompleted(completed(outside, "fp", response(200, "{}"), RETENTION)))
			.as("no transaction: its own")
			.isEmpty();
		assertThat(joining.find(outside)).isPresent();
	}

	/**
	 * Two callers record one key, each in its own transaction, with transactional
	 * completion. The second's recording waits (the database reports its session waiting
	 * for a lock) until the first's transaction ends: if the first commits, the second is
	 * given the first's record; if it rolls back, the second records.
	 * @param sessionIdQuery a query for the id of the current session (connection)
	 * @param lockWait whether the database reports a session waiting for a lock right now
	 */
	protected void assertARecordingInACallersTransactionWaitsForAnEarlierOne(String sessionIdQuery, LockWait lockWait)
			throws Exception {
		for (boolean firstCommits : new boolean[] { true, false }) {
			JdbcIdempotencyStore joining = store(this.dataSource, TABLE, true);
			TransactionTemplate caller = new TransactionTemplate(new DataSourceTransactionManager(this.dataSource));
			RecordId id = newId();
			StoredResponse first = response(201, "{\"first\":1}");
			StoredResponse second = response(201, "{\"second\":2}");
			CountDownLatch firstRecorded = new CountDownLatch(1);
			CountDownLatch endFirst = new CountDownLatch(1);
			AtomicLong secondSession = new AtomicLong(-1);
			ExecutorService callers = Executors.newFixedThreadPool(2);
			try {
				Future<Optional<IdempotencyRecord>> firstResult = callers.submit(() -> caller.execute((status) -> {
					Optional<IdempotencyRecord> result = joining.recordCompleted(completed(id, "fp", first, RETENTION));
					firstRecorded.countDown();
					await(endFirst);
					if (!firstCommits) {
						status.setRollbackOnly();
					}
					return result;
				}));
				assertThat(firstRecorded.await(30, TimeUnit.SECONDS)).isTrue();
				Future<Optional<IdempotencyRecord>> secondResult = callers.submit(() -> caller.execute((status) -> {
					secondSession.set(jdbc().sql(sessionIdQuery).query(Long.class).single());
					// The business code read the table first: on MariaDB its REPEATABLE
					// READ
					// snapshot now predates the first's commit.
					assertThat(jdbc().sql("SELECT COUNT(*) FROM " + TABLE + " WHERE idem_key = :key")
						.param("key", id.key())
						.query(Long.class)
						.single()).isZero();
					return joining.recordCompleted(completed(id, "fp", second, RETENTION));
				}));
				awaitLockWait(lockWait, secondSession, secondResult);
				assertThat(secondResult).as("waiting for the first transaction").isNotDone();
				endFirst.countDown();
				assertThat(firstResult.get(30, TimeUnit.SECONDS)).isEmpty();
				Optional<IdempotencyRecord> secondOutcome = secondResult.get(30, TimeUnit.SECONDS);
				if (firstCommits) {
					assertThat(secondOutcome).as("the first's record").hasValueSatisfying((record) -> {
						assertThat(record.state()).isEqualTo(RecordState.COMPLETED);
						assertThat(record.response()).isEqualTo(first);
					});
					assertThat(joining.find(id).orElseThrow().response()).isEqualTo(first);
				}
				else {
					assertThat(secondOutcome).as("recorded after the first rolled back").isEmpty();
					assertThat(joining.find(id).orElseThrow().response()).isEqualTo(second);
				}
			}
			finally {
				endFirst.countDown();
				callers.shutdownNow();
			}
		}
	}

	private static void await(CountDownLatch latch) {
		try {
			if (!latch.await(60, TimeUnit.SECONDS)) {
				throw new IllegalStateException("not released");
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
	}

	/**
	 * Waits until the database reports the session waiting for a lock; fails at once if
	 * the second recording ends without having been seen waiting.
	 */
	private void awaitLockWait(LockWait lockWait, AtomicLong session, Future<?> second) throws Exception {
		long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
		while (session.get() < 0 || !lockWait.isWaiting(session.get())) {
			if (second.isDone()) {
				throw new AssertionError("session " + session.get() + " ended without being seen waiting for a lock: "
						+ outcome(second));
			}
			if (System.nanoTime() > deadline) {
				throw new AssertionError("session " + session.get() + " never waited for a lock");
			}
			Thread.sleep(LOCK_WAIT_POLL_MILLIS);
		}
	}

	private static String outcome(Future<?> done) {
		try {
			return "returned " + done.get();
		}
		catch (Exception ex) {
			return "failed with " + ex;
		}
	}

	/** How the database tells whether a session waits for a lock. */
	@FunctionalInterface
	protected interface LockWait {

		/**
		 * Whether the session with this id waits for a lock now, as the database reports
		 * it at the time of the call (not from a cached snapshot).
		 * @param session the id of the session, as the session id query returns it
		 * @return whether it waits
		 */
		boolean isWaiting(long session);

	}

	/**
	 * Proves that leases and expiry are judged by the database's clock, not the JVM's.
	 * The {@code clockAhead} data source reaches the same table through sessions whose
	 * clock runs two hours ahead of the JVM (and of the other sessions). A store reading
	 * the JVM clock would behave identically through both data sources; this one must
	 * not:
	 * <ul>
	 * <li>a record reserved with a one-hour lease through the normal sessions is taken
	 * over through the clock-ahead sessions (its lease is over by their clock, not by the
	 * JVM's);</li>
	 * <li>a lease written through the clock-ahead sessions ends about three hours from
	 * the JVM's now (their now + one hour), not one hour;</li>
	 * <li>a record whose retention (one hour) is over by the clock-ahead sessions is
	 * reported absent by them while the normal sessions still find it.</li>
	 * </ul>
	 * @param clockAhead sessions on the same table whose clock is two hours ahead
	 */
	protected void assertLeasesFollowTheDatabaseClock(DataSource clockAhead) {
		Duration hour = Duration.ofHours(1);
		JdbcIdempotencyStore ahead = store(clockAhead, TABLE, false);

		RecordId leased = newId();
		this.store.reserve(request(leased, "fp", token(), hour, hour.multipliedBy(5)));
		assertThat(this.store.reserve(request(leased, "fp", token(), hour, hour.multipliedBy(5))))
			.isInstanceOf(ReserveResult.Existing.class);
		assertThat(ahead.reserve(request(leased, "fp", token(), hour, hour.multipliedBy(5))))
			.isEqualTo(new ReserveResult.Acquired(true));

		Instant leaseEnd = this.store.find(leased).orElseThrow().leaseExpiresAt();
		assertThat(leaseEnd).isCloseTo(Instant.now().plus(Duration.ofHours(3)), within(5, ChronoUnit.MINUTES));

		RecordId retained = newId();
		this.store.reserve(request(retained, "fp", token(), Duration.ofMinutes(10), hour));
		assertThat(this.store.find(retained)).isPresent();
		assertThat(ahead.find(retained)).as("expired by the database clock that runs ahead").isEmpty();
	}

}
