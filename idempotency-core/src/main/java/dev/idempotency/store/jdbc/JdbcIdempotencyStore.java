package dev.idempotency.store.jdbc;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;

import javax.sql.DataSource;

import dev.idempotency.store.CompletedRecordRequest;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.IdempotencyStoreException;
import dev.idempotency.store.InspectedRecord;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.RecordState;
import dev.idempotency.store.ReserveRequest;
import dev.idempotency.store.ReserveResult;
import dev.idempotency.store.StoredResponse;
import dev.idempotency.store.StoredResponseCodec;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.dao.DataIntegrityViolationException;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.dao.TransientDataAccessException;
import org.springframework.jdbc.BadSqlGrammarException;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.TransactionException;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.util.ClassUtils;

/**
 * An {@link IdempotencyStore} in a relational database, one row per record. Every
 * transition is one conditional statement (reserve: one statement on PostgreSQL; on
 * MariaDB/MySQL one plain insert for a fresh key, a read of the row that refused it, and
 * for a row free to take a write and a read of the locked row, as on H2; a recording that
 * finds a row there: a second statement reads or replaces it) judged by the database's
 * clock. The SQL is in one class per database ({@link PostgresqlStatements},
 * {@link MariaDbStatements}, {@link H2Statements}).
 * <p>
 * A caller's transaction is never joined by accident: a record outlives a business
 * rollback, and the store never aborts the caller's transaction. A call that is one
 * statement (every call on PostgreSQL; complete, release, heartbeat and find everywhere;
 * each statement of a recording, which decides on its own) runs as that statement alone
 * in auto-commit when no Spring transaction is active on the thread and the pool hands
 * out auto-commit connections (JDBC's default, checked once): one round trip, where a
 * transaction would add a {@code COMMIT}. Otherwise, and for the two-statement
 * reservations of H2 and of a row free to take on MariaDB/MySQL, the call runs in a short
 * transaction of its own ({@code REQUIRES_NEW} on a transaction manager for this store's
 * {@link DataSource}). The one opt-in exception is {@code transactionalCompletion}: then
 * {@link #complete} and {@link #recordCompleted} join a Spring-managed transaction that
 * is active on the same {@code DataSource}, so the completed record commits or rolls back
 * with the business write.
 * <p>
 * On PostgreSQL a reservation can be made to commit without waiting for its WAL flush
 * ({@link ReserveCommit}): still one statement, which sets
 * {@code synchronous_commit = off} for its own transaction only; for every reservation
 * ({@link ReserveCommit#ON}), or only for those whose run completes atomically
 * ({@link ReserveCommit#WITH_ATOMIC_COMPLETION}), where the completion's durable commit
 * follows it in the same WAL.
 *
 * @since 0.1.0
 */
public class JdbcIdempotencyStore implements IdempotencyStore {

	/**
	 * A reservation or recording that sees no row, or an outdated one, runs again; this
	 * many times at most.
	 */
	private static final int MAX_ATTEMPTS = 20;

	/**
	 * How much later than the network timeout the JDBC query timeout fires. The network
	 * timeout must come first: PostgreSQL's driver cancels a statement over a new
	 * connection, and when the network drops everything the statement then waits for that
	 * cancel request to time out (10 s by default) after its own read has timed out.
	 */
	private static final Duration QUERY_TIMEOUT_AFTER_NETWORK_TIMEOUT = Duration.ofSeconds(1);

	private static final boolean PGJDBC_PRESENT = ClassUtils.isPresent("org.postgresql.core.BaseConnection",
			JdbcIdempotencyStore.class.getClassLoader());

	private final DataSource dataSource;

	/**
	 * Where the store's connections come from: {@link #dataSource} with a network timeout
	 * on each connection while the store holds it, or {@code null} without a query
	 * timeout.
	 */
	private final @Nullable NetworkTimeoutDataSource timedDataSource;

	private final JdbcIdempotencyDialect dialect;

	private final String table;

	private final JdbcClient jdbc;

	private final TransactionTemplate ownTransaction;

	private final boolean transactionalCompletion;

	/**
	 * Whether this store can tell that a joined transaction has sent nothing yet
	 * ({@link #joinedTransactionIsEmpty()}): PostgreSQL, with its driver.
	 */
	private final boolean emptyTransactionsTold;

	private final ReserveCommit reserveCommit;

	private final List<String> reserveSql;

	/**
	 * The reservation that commits asynchronously, for the requests that
	 * {@link #reserveCommit} allows it; {@code null} when none may.
	 */
	private final @Nullable List<String> asynchronousReserveSql;

	/**
	 * MariaDB: a fresh key's reservation as one plain insert, and the read of a row that
	 * refused it; {@code null} elsewhere.
	 */
	private final @Nullable List<String> reserveByInsertSql;

	private final String completeSql;

	private final String releaseSql;

	private final String heartbeatSql;

	private final String findSql;

	private final String purgeSql;

	private final String recordCompletedSql;

	private final String findCurrentSql;

	private final String recordOverExpiredSql;

	private final String inspectSql;

	private final String removeSql;

	/**
	 * Whether the pool's connections are in auto-commit; {@code null} until first
	 * checked.
	 */
	private volatile @Nullable Boolean autoCommitPool;

	/**
	 * Creates a store whose statements run without a query timeout of their own.
	 * @param dataSource where the table lives
	 * @param dialect the SQL dialect of that database
	 * @param tableName the table, a plain SQL identifier
	 * @param transactionalCompletion whether {@link #complete} and
	 * {@link #recordCompleted} join the caller's transaction on the same data source
	 */
	public JdbcIdempotencyStore(DataSource dataSource, JdbcIdempotencyDialect dialect, String tableName,
			boolean transactionalCompletion) {
		this(dataSource, dialect, tableName, transactionalCompletion, Duration.ZERO);
	}

	/**
	 * Creates a store.
	 * @param dataSource where the table lives
	 * @param dialect the SQL dialect of that database
	 * @param tableName the table, a plain SQL identifier
	 * @param transactionalCompletion whether {@link #complete} and
	 * {@link #recordCompleted} join the caller's transaction on the same data source
	 * @param queryTimeout the longest the store waits for its database in one round trip;
	 * zero for no limit. It is the network timeout ({@link Connection#setNetworkTimeout})
	 * of each connection while the store holds it (the previous one is restored when the
	 * store releases it), so a call ends even when the server never reads the statement.
	 * Statements also get a JDBC query timeout of this in whole seconds, rounded up, plus
	 * one, which stops them on the server
	 */
	public JdbcIdempotencyStore(DataSource dataSource, JdbcIdempotencyDialect dialect, String tableName,
			boolean transactionalCompletion, Duration queryTimeout) {
		this(dataSource, dialect, tableName, transactionalCompletion, queryTimeout, false);
	}

	/**
	 * Creates a store, optionally with reservations that commit without waiting for their
	 * WAL flush (PostgreSQL only).
	 * @param dataSource where the table lives
	 * @param dialect the SQL dialect of that database
	 * @param tableName the table, a plain SQL identifier
	 * @param transactionalCompletion whether {@link #complete} and
	 * {@link #recordCompleted} join the caller's transaction on the same data source
	 * @param queryTimeout the longest the store waits for its database in one round trip;
	 * zero for no limit. It is the network timeout ({@link Connection#setNetworkTimeout})
	 * of each connection while the store holds it (the previous one is restored when the
	 * store releases it), so a call ends even when the server never reads the statement.
	 * Statements also get a JDBC query timeout of this in whole seconds, rounded up, plus
	 * one, which stops them on the server
	 * @param reserveAsynchronousCommit whether a reservation that writes commits with
	 * {@code synchronous_commit = off}, set for its own transaction only; completion,
	 * release, heartbeat and recording stay durable. A crash of the database server can
	 * then lose a reservation made in the last moments before it.
	 * @throws IllegalArgumentException if {@code reserveAsynchronousCommit} is asked for
	 * on another database than PostgreSQL
	 */
	public JdbcIdempotencyStore(DataSource dataSource, JdbcIdempotencyDialect dialect, String tableName,
			boolean transactionalCompletion, Duration queryTimeout, boolean reserveAsynchronousCommit) {
		this(dataSource, dialect, tableName, transactionalCompletion, queryTimeout,
				reserveAsynchronousCommit ? ReserveCommit.ON : ReserveCommit.OFF);
	}

	/**
	 * Creates a store, with reservations that commit without waiting for their WAL flush
	 * as {@code reserveCommit} says (PostgreSQL only).
	 * @param dataSource where the table lives
	 * @param dialect the SQL dialect of that database
	 * @param tableName the table, a plain SQL identifier
	 * @param transactionalCompletion whether {@link #complete} and
	 * {@link #recordCompleted} join the caller's transaction on the same data source
	 * @param queryTimeout the longest the store waits for its database in one round trip;
	 * zero for no limit (see above)
	 * @param reserveCommit which reservations commit asynchronously
	 * @throws IllegalArgumentException if {@link ReserveCommit#ON} is asked for on
	 * another database than PostgreSQL ({@link ReserveCommit#WITH_ATOMIC_COMPLETION} is
	 * durable there: they have no per-transaction equivalent)
	 * @since 0.1.0
	 */
	public JdbcIdempotencyStore(DataSource dataSource, JdbcIdempotencyDialect dialect, String tableName,
			boolean transactionalCompletion, Duration queryTimeout, ReserveCommit reserveCommit) {
		if (reserveCommit == ReserveCommit.ON && dialect != JdbcIdempotencyDialect.POSTGRESQL) {
			throw new IllegalArgumentException("An asynchronous commit of the reservation (synchronous_commit = off)"
					+ " exists on PostgreSQL only, not on " + dialect);
		}
		this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
		this.dialect = Objects.requireNonNull(dialect, "dialect");
		String table = JdbcIdempotencyDialect.validateTableName(tableName);
		this.table = table;
		int querySeconds = querySeconds(queryTimeout);
		this.timedDataSource = (querySeconds > 0)
				? new NetworkTimeoutDataSource(dataSource, Math.toIntExact(Math.max(1, queryTimeout.toMillis())))
				: null;
		DataSource connections = (this.timedDataSource != null) ? this.timedDataSource : dataSource;
		JdbcTemplate template = new JdbcTemplate(connections);
		template.setQueryTimeout(querySeconds);
		this.jdbc = JdbcClient.create(template);
		this.ownTransaction = new TransactionTemplate(new DataSourceTransactionManager(connections));
		this.ownTransaction.setPropagationBehavior(TransactionDefinition.PROPAGATION_REQUIRES_NEW);
		this.transactionalCompletion = transactionalCompletion;
		this.emptyTransactionsTold = PGJDBC_PRESENT && dialect == JdbcIdempotencyDialect.POSTGRESQL;
		boolean asynchronous = (dialect == JdbcIdempotencyDialect.POSTGRESQL)
				&& Objects.requireNonNull(reserveCommit, "reserveCommit") != ReserveCommit.OFF;
		this.reserveCommit = asynchronous ? reserveCommit : ReserveCommit.OFF;
		JdbcIdempotencyStatements statements = dialect.statements(table);
		this.reserveSql = statements.reserve();
		this.asynchronousReserveSql = asynchronous
				? PostgresqlStatements.ASYNCHRONOUS_COMMIT_RESERVE_STATEMENTS.forTable(table).reserve() : null;
		this.reserveByInsertSql = (dialect == JdbcIdempotencyDialect.MARIADB)
				? List.of(MariaDbStatements.RESERVE_INSERT.replace(JdbcIdempotencyStatements.TABLE, table),
						MariaDbStatements.RESERVE_READ.replace(JdbcIdempotencyStatements.TABLE, table))
				: null;
		this.completeSql = statements.complete();
		this.releaseSql = statements.release();
		this.heartbeatSql = statements.heartbeat();
		this.findSql = statements.find();
		this.purgeSql = statements.purge();
		this.recordCompletedSql = statements.recordCompleted();
		this.findCurrentSql = statements.findCurrent();
		this.recordOverExpiredSql = statements.recordOverExpired();
		this.inspectSql = statements.inspect();
		this.removeSql = statements.remove();
	}

	/**
	 * Creates a store whose dialect is detected from the database and whose completion
	 * runs in its own transaction.
	 * @param dataSource where the table lives
	 * @param tableName the table, a plain SQL identifier
	 */
	public JdbcIdempotencyStore(DataSource dataSource, String tableName) {
		this(dataSource, JdbcIdempotencyDialect.detect(dataSource), tableName, false);
	}

	@Override
	public ReserveResult reserve(ReserveRequest request) {
		List<String> byInsert = this.reserveByInsertSql;
		if (byInsert != null) {
			// One statement for a fresh key and two for a taken one, no transaction,
			// where
			// the write-then-read transaction costs five round trips (autocommit off,
			// write, read, commit, autocommit on). Only a row free to take (expired, or
			// its lease over) goes on to that transaction.
			ReserveResult result = oneStatement("reserve", () -> reserveByInsert(byInsert, request));
			if (result != null) {
				return result;
			}
		}
		for (int attempt = 1;; attempt++) {
			@Nullable ReserveResult result;
			try {
				List<String> sql = reserveSql(request);
				result = (sql.size() == 1) ? oneStatement("reserve", () -> reserveOnce(sql, request))
						: inOwnTransaction("reserve", () -> reserveOnce(sql, request));
			}
			catch (IdempotencyStoreException ex) {
				// A race lost on a new key (H2) or a deadlock victim: the transaction
				// rolled back and changed nothing, so running it again is safe.
				if (!isRetryable(ex.getCause()) || attempt >= MAX_ATTEMPTS) {
					throw ex;
				}
				continue;
			}
			if (result != null) {
				return result;
			}
			if (attempt >= MAX_ATTEMPTS) {
				throw new IdempotencyStoreException("Idempotency record " + request.id()
						+ " kept changing during reservation; gave up after " + attempt + " attempts");
			}
		}
	}

	/**
	 * A plain insert of the reservation; if the primary key refuses it, the row that is
	 * there.
	 * @return {@code Acquired} for the insert, {@code Existing} for a row that is not
	 * free to take, {@code null} for one that is (or is gone): reserve it in a
	 * transaction
	 */
	private @Nullable ReserveResult reserveByInsert(List<String> byInsert, ReserveRequest request) {
		try {
			reserveStatement(byInsert.get(0), request).update();
			return new ReserveResult.Acquired(false);
		}
		catch (DataIntegrityViolationException ex) {
			if (!isDuplicateKey(ex)) {
				throw ex;
			}
		}
		return readReservation(byInsert.get(1), request);
	}

	/** MariaDB's and MySQL's duplicate entry (ER_DUP_ENTRY, 1062). */
	private static boolean isDuplicateKey(DataIntegrityViolationException ex) {
		if (ex instanceof DuplicateKeyException) {
			return true;
		}
		for (Throwable cause = ex.getCause(); cause != null; cause = cause.getCause()) {
			if (cause instanceof SQLException sql && sql.getErrorCode() == 1062) {
				return true;
			}
		}
		return false;
	}

	private static boolean isRetryable(@Nullable Throwable cause) {
		return cause instanceof DuplicateKeyException || cause instanceof TransientDataAccessException;
	}

	/** One attempt; {@code null} when the row seen was missing or already outdated. */
	private @Nullable ReserveResult reserveOnce(List<String> sql, ReserveRequest request) {
		for (int i = 0; i < sql.size() - 1; i++) {
			reserveStatement(sql.get(i), request).update();
		}
		return readReservation(sql.get(sql.size() - 1), request);
	}

	/**
	 * What the row read by {@code sql} means for {@code request}; {@code null} when none
	 * came back or it was free to take but outdated.
	 */
	private @Nullable ReserveResult readReservation(String sql, ReserveRequest request) {
		List<Optional<ReserveResult>> rows = reserveStatement(sql, request)
			.query((rs, rowNum) -> Optional.ofNullable(reserveResult(rs, request)))
			.list();
		return rows.isEmpty() ? null : rows.get(0).orElse(null);
	}

	/**
	 * What the reserve statement's row means: ours ({@code Acquired}), another's
	 * ({@code Existing}), or {@code null} when it was free to take but outdated when read
	 * (run again). A row that is ours is judged by its owner token alone: its timestamps
	 * and response are not read, since reading a timestamp costs the driver a calendar
	 * per result set (pgjdbc), and a fresh key, the common case, needs none of them.
	 */
	private @Nullable ReserveResult reserveResult(ResultSet rs, ReserveRequest request) throws SQLException {
		if (request.ownerToken().equals(rs.getString("owner_token"))) {
			return new ReserveResult.Acquired(rs.getBoolean("taken_over"));
		}
		if (rs.getBoolean("acquirable")) {
			return null;
		}
		return new ReserveResult.Existing(record(request.id(), rs));
	}

	private JdbcClient.StatementSpec reserveStatement(String sql, ReserveRequest request) {
		return this.jdbc.sql(sql)
			.param("scope", request.id().scope())
			.param("key", request.id().key())
			.param("fingerprint", request.fingerprint())
			.param("operation", request.operation())
			.param("owner", request.ownerToken())
			.param("leaseMicros", micros(request.lease()))
			.param("retentionMicros", micros(request.retention()));
	}

	@Override
	public boolean complete(RecordId id, String ownerToken, StoredResponse response) {
		byte[] encoded = StoredResponseCodec.encode(response);
		Supplier<Boolean> update = () -> owned(this.completeSql, id, ownerToken).param("response", encoded)
			.update() == 1;
		if (joinsCurrentTransaction()) {
			try {
				return onCallerConnection(update);
			}
			catch (DataAccessException ex) {
				throw failure("complete " + id, ex);
			}
		}
		return oneStatement("complete", update);
	}

	/**
	 * True with {@code transactionalCompletion} while a Spring transaction is active on
	 * this store's data source.
	 */
	@Override
	public boolean joinsCurrentTransaction() {
		return this.transactionalCompletion && joinsCallerTransaction();
	}

	/**
	 * Whether {@link #complete} and {@link #recordCompleted} join a Spring transaction
	 * active on this store's data source ({@code transactionalCompletion}).
	 */
	public boolean transactionalCompletion() {
		return this.transactionalCompletion;
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Told on PostgreSQL, whose driver knows whether it has begun its transaction yet (it
	 * sends {@code BEGIN} with the first statement), and only while nothing but JDBC
	 * connections is bound to the thread ({@link EmptyTransactions}).
	 */
	@Override
	public boolean joinedTransactionIsEmpty() {
		if (!this.emptyTransactionsTold || !joinsCurrentTransaction()) {
			return false;
		}
		try {
			return EmptyTransactions.isEmpty(this.dataSource);
		}
		catch (SQLException ex) {
			// cannot tell: the transaction is treated as not empty
			return false;
		}
	}

	/** Whether a Spring transaction is active on this store's data source right now. */
	private boolean joinsCallerTransaction() {
		return TransactionSynchronizationManager.isActualTransactionActive()
				&& TransactionSynchronizationManager.hasResource(this.dataSource);
	}

	@Override
	public boolean release(RecordId id, String ownerToken) {
		return oneStatement("release", () -> owned(this.releaseSql, id, ownerToken).update() == 1);
	}

	@Override
	public boolean heartbeat(RecordId id, String ownerToken, Duration lease) {
		return oneStatement("heartbeat",
				() -> owned(this.heartbeatSql, id, ownerToken).param("leaseMicros", micros(lease)).update() == 1);
	}

	private JdbcClient.StatementSpec owned(String sql, RecordId id, String ownerToken) {
		return this.jdbc.sql(sql).param("scope", id.scope()).param("key", id.key()).param("owner", ownerToken);
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * The recording statement alone on a new key (one round trip in auto-commit); after
	 * it found a row, a read of that row, or a replacement if the row has expired. Each
	 * statement decides atomically on its own, so each runs as {@link #complete} does: in
	 * the caller's transaction under {@code transactionalCompletion}, else on its own. A
	 * recording that joined a caller's transaction and returns a record must not let that
	 * transaction commit its business writes as if it had recorded: its caller rolls
	 * back.
	 */
	@Override
	public Optional<IdempotencyRecord> recordCompleted(CompletedRecordRequest request) {
		byte[] encoded = StoredResponseCodec.encode(request.response());
		boolean joined = joinsCurrentTransaction();
		for (int attempt = 1;; attempt++) {
			try {
				if (recorded(request, encoded, joined)) {
					return Optional.empty();
				}
				Optional<IdempotencyRecord> live = recordingStep(joined, () -> read(this.findCurrentSql, request.id()));
				if (live.isPresent()) {
					return live;
				}
				if (recordingStep(joined,
						() -> recordStatement(this.recordOverExpiredSql, request, encoded).update() == 1)) {
					return Optional.empty();
				}
			}
			catch (IdempotencyStoreException ex) {
				// A deadlock victim on its own rolled back and changed nothing; in the
				// caller's transaction it took the caller's work with it.
				if (joined || !isRetryable(ex.getCause()) || attempt >= MAX_ATTEMPTS) {
					throw ex;
				}
				continue;
			}
			// The row found was deleted before it could be read or replaced.
			if (attempt >= MAX_ATTEMPTS) {
				throw new IdempotencyStoreException("Idempotency record " + request.id()
						+ " kept changing during recording; gave up after " + attempt + " attempts");
			}
		}
	}

	/**
	 * Runs the recording statement: whether it recorded. A duplicate key (the loser of a
	 * race on a new key, or any existing row on MariaDB/MySQL) rolled back only that
	 * statement and means a row is there.
	 */
	private boolean recorded(CompletedRecordRequest request, byte[] encoded, boolean joined) {
		try {
			return recordingStep(joined,
					() -> recordStatement(this.recordCompletedSql, request, encoded).update() == 1);
		}
		catch (IdempotencyStoreException ex) {
			if (ex.getCause() instanceof DuplicateKeyException) {
				return false;
			}
			throw ex;
		}
	}

	private <T extends @Nullable Object> T recordingStep(boolean joined, Supplier<T> statement) {
		if (!joined) {
			return oneStatement("record", statement);
		}
		try {
			return onCallerConnection(statement);
		}
		catch (DataAccessException ex) {
			throw failure("record", ex);
		}
	}

	private JdbcClient.StatementSpec recordStatement(String sql, CompletedRecordRequest request, byte[] encoded) {
		return this.jdbc.sql(sql)
			.param("scope", request.id().scope())
			.param("key", request.id().key())
			.param("fingerprint", request.fingerprint())
			.param("operation", request.operation())
			.param("retentionMicros", micros(request.retention()))
			.param("response", encoded);
	}

	@Override
	public Optional<IdempotencyRecord> find(RecordId id) {
		return oneStatement("find", () -> read(this.findSql, id));
	}

	private Optional<IdempotencyRecord> read(String sql, RecordId id) {
		return this.jdbc.sql(sql)
			.param("scope", id.scope())
			.param("key", id.key())
			.query((rs, rowNum) -> record(id, rs))
			.optional();
	}

	@Override
	public Optional<InspectedRecord> inspect(RecordId id) {
		return oneStatement("inspect",
				() -> this.jdbc.sql(this.inspectSql)
					.param("scope", id.scope())
					.param("key", id.key())
					.query((rs, rowNum) -> new InspectedRecord(record(id, rs),
							this.dialect.readInstant(rs, "created_at"), rs.getString("owner_token")))
					.optional());
	}

	@Override
	public boolean remove(RecordId id) {
		return oneStatement("remove",
				() -> this.jdbc.sql(this.removeSql).param("scope", id.scope()).param("key", id.key()).update() == 1);
	}

	@Override
	public int purgeExpired(int maxRecords) {
		if (maxRecords < 1) {
			return 0;
		}
		return inOwnTransaction("purge", () -> this.jdbc.sql(this.purgeSql).param("max", maxRecords).update());
	}

	@Override
	public String name() {
		return "jdbc";
	}

	/** The dialect this store speaks. */
	public JdbcIdempotencyDialect dialect() {
		return this.dialect;
	}

	/**
	 * Whether every reservation commits without waiting for its WAL flush (PostgreSQL
	 * only).
	 */
	public boolean reserveAsynchronousCommit() {
		return this.reserveCommit == ReserveCommit.ON;
	}

	/**
	 * Which reservations commit without waiting for their WAL flush: always
	 * {@link ReserveCommit#OFF} but on PostgreSQL.
	 * @since 0.1.0
	 */
	public ReserveCommit reserveCommit() {
		return this.reserveCommit;
	}

	/** The statements of a reservation for this request. */
	private List<String> reserveSql(ReserveRequest request) {
		List<String> asynchronous = this.asynchronousReserveSql;
		if (asynchronous != null && (this.reserveCommit == ReserveCommit.ON
				|| (request.atomicCompletion() && this.transactionalCompletion))) {
			return asynchronous;
		}
		return this.reserveSql;
	}

	/**
	 * Runs work on the connection of the caller's transaction, with the store's network
	 * timeout for the time of the work.
	 */
	private <T extends @Nullable Object> T onCallerConnection(Supplier<T> work) {
		return (this.timedDataSource != null) ? this.timedDataSource.onBoundConnection(work) : work.get();
	}

	/**
	 * Runs work that is one statement, atomic on its own: alone in auto-commit when that
	 * cannot join a caller's transaction, else in a transaction of its own.
	 */
	private <T extends @Nullable Object> T oneStatement(String action, Supplier<T> statement) {
		if (TransactionSynchronizationManager.isSynchronizationActive()
				|| TransactionSynchronizationManager.hasResource(this.dataSource) || !autoCommitPool()) {
			// A transaction (or a connection bound to this thread) would be joined:
			// suspend it instead.
			return inOwnTransaction(action, statement);
		}
		try {
			return statement.get();
		}
		catch (DataAccessException ex) {
			throw failure(action, ex);
		}
	}

	private boolean autoCommitPool() {
		Boolean autoCommit = this.autoCommitPool;
		if (autoCommit == null) {
			try (Connection connection = ((this.timedDataSource != null) ? this.timedDataSource : this.dataSource)
				.getConnection()) {
				autoCommit = connection.getAutoCommit();
			}
			catch (SQLException ex) {
				throw new IdempotencyStoreException("Idempotency store cannot reach its database", ex);
			}
			this.autoCommitPool = autoCommit;
		}
		return autoCommit;
	}

	private <T extends @Nullable Object> T inOwnTransaction(String action, Supplier<T> work) {
		try {
			return this.ownTransaction.execute((status) -> work.get());
		}
		catch (DataAccessException | TransactionException ex) {
			throw failure(action, ex);
		}
	}

	/**
	 * The store's failure; a missing table is named, so the health detail says what is
	 * wrong.
	 */
	private IdempotencyStoreException failure(String action, RuntimeException ex) {
		String problem = (ex instanceof BadSqlGrammarException)
				? ": table " + this.table + " not found (or not the starter's schema)" : "";
		return new IdempotencyStoreException("Idempotency store failed to " + action + problem, ex);
	}

	private IdempotencyRecord record(RecordId id, ResultSet rs) throws SQLException {
		RecordState state = RecordState.valueOf(rs.getString("state"));
		byte @Nullable [] response = rs.getBytes("response");
		StoredResponse stored = (state == RecordState.COMPLETED && response != null)
				? StoredResponseCodec.decode(response) : null;
		return new IdempotencyRecord(id, rs.getString("fingerprint"), rs.getString("operation"), state,
				this.dialect.readInstant(rs, "lease_expires_at"),
				Objects.requireNonNull(this.dialect.readInstant(rs, "expires_at"), "expires_at (NOT NULL)"), stored);
	}

	/** The JDBC query timeout: zero, or after the network timeout. */
	private static int querySeconds(Duration timeout) {
		if (timeout.isNegative()) {
			throw new IllegalArgumentException("Query timeout must not be negative");
		}
		if (timeout.isZero()) {
			return 0;
		}
		return Math.toIntExact(timeout.plus(QUERY_TIMEOUT_AFTER_NETWORK_TIMEOUT).plusNanos(999_999_999).getSeconds());
	}

	/** Whole microseconds, rounded up so that a positive duration never becomes zero. */
	static long micros(Duration duration) {
		long micros = Math.multiplyExact(duration.getSeconds(), 1_000_000L);
		return Math.addExact(micros, (duration.getNano() + 999) / 1000);
	}

	/**
	 * Which reservations commit without waiting for their WAL flush
	 * ({@code synchronous_commit = off} for the reservation's own transaction only);
	 * completion, release, heartbeat and recording stay durable. PostgreSQL only.
	 *
	 * @since 0.1.0
	 */
	public enum ReserveCommit {

		/** Every reservation is durable. */
		OFF,

		/**
		 * Every reservation commits asynchronously: a crash of the database server can
		 * lose one made in the moments before it, whatever follows it.
		 */
		ON,

		/**
		 * Only a reservation whose run completes atomically
		 * ({@link ReserveRequest#atomicCompletion()}) commits asynchronously: the
		 * completion's durable commit, and any write of the operation in this database,
		 * come after it in the same WAL, so a crash that loses the reservation loses them
		 * too. Elsewhere (another database, another kind of run) reservations are
		 * durable.
		 */
		WITH_ATOMIC_COMPLETION

	}

}
