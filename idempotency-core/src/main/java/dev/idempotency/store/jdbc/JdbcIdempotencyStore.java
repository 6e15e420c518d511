package dev.idempotency.store.jdbc;

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
import dev.idempotency.store.ReserveRequest;
import dev.idempotency.store.ReserveResult;
import dev.idempotency.store.StoredResponse;
import dev.idempotency.store.StoredResponseCodec;
import dev.idempotency.store.TransactionConflictException;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.DataAccessException;
import org.springframework.dao.DuplicateKeyException;
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
 * <p>
 * Built with {@link #builder(DataSource)} (defaults: the {@code idempotency.store.jdbc.*}
 * properties); its constructor is package-private so that AOP proxies can subclass it.
 *
 * @since 0.1.0
 */
public class JdbcIdempotencyStore implements IdempotencyStore {

	/**
	 * A reservation or recording that sees no row, or an outdated one, runs again; this
	 * many times at most.
	 */
	static final int MAX_ATTEMPTS = JdbcIdempotencyStatements.MAX_ATTEMPTS;

	private static final boolean PGJDBC_PRESENT = ClassUtils.isPresent("org.postgresql.core.BaseConnection",
			JdbcIdempotencyStore.class.getClassLoader());

	private final DataSource dataSource;

	private final JdbcIdempotencyDialect dialect;

	private final JdbcIdempotencyStatements statements;

	private final JdbcStatementRunner runner;

	private final JdbcRecordRows rows;

	private final JdbcReservations reservations;

	private final boolean transactionalCompletion;

	/**
	 * Whether this store can tell that a joined transaction has sent nothing yet
	 * ({@link #joinedTransactionIsEmpty()}): PostgreSQL, with its driver.
	 */
	private final boolean emptyTransactionsTold;

	private final ReserveCommit reserveCommit;

	/**
	 * Set while a completion runs as the last write of the caller's transaction
	 * ({@link #lastInJoinedTransaction}).
	 */
	private final ThreadLocal<Boolean> lastInTransaction = new ThreadLocal<>();

	/**
	 * The completion and the recording with the transaction's {@code COMMIT}
	 * ({@link CommittingWrites}); {@code null} where the store cannot send them so.
	 */
	private final @Nullable String completeCommitting;

	private final @Nullable String recordCommitting;

	/** The smallest body stored deflated, in bytes ({@link Builder#deflateFrom}). */
	private final int deflateFrom;

	JdbcIdempotencyStore(Builder builder, JdbcIdempotencyDialect dialect) {
		this.dataSource = builder.dataSource;
		this.deflateFrom = builder.deflateFrom;
		this.dialect = dialect;
		String table = builder.tableName;
		this.statements = dialect.statements(table);
		this.runner = new JdbcStatementRunner(this.dataSource, table, builder.queryTimeout);
		this.rows = new JdbcRecordRows(this.runner.jdbc(), dialect);
		this.transactionalCompletion = builder.transactionalCompletion;
		this.emptyTransactionsTold = PGJDBC_PRESENT && dialect == JdbcIdempotencyDialect.POSTGRESQL;
		this.reserveCommit = dialect.reserveCommit(builder.reserveCommit);
		this.completeCommitting = this.emptyTransactionsTold ? CommittingWrites.committing(this.statements.complete())
				: null;
		this.recordCommitting = this.emptyTransactionsTold
				? CommittingWrites.committing(this.statements.recordCompleted()) : null;
		this.reservations = new JdbcReservations(this.runner, this.rows, dialect, table, this.statements.reserve(),
				this.reserveCommit, this.transactionalCompletion);
	}

	/**
	 * A builder of a store whose table lives in {@code dataSource}, with the defaults of
	 * the {@code idempotency.store.jdbc.*} properties: the dialect detected from the
	 * database, the table {@code idempotency_record}, a query timeout of two seconds,
	 * {@link ReserveCommit#WITH_ATOMIC_COMPLETION}; and a completion in a transaction of
	 * the store's own.
	 * @param dataSource where the table lives
	 * @since 0.2.0
	 */
	public static Builder builder(DataSource dataSource) {
		return new Builder(dataSource);
	}

	@Override
	public ReserveResult reserve(ReserveRequest request) {
		return this.reservations.reserve(request);
	}

	@Override
	public boolean complete(RecordId id, String ownerToken, StoredResponse response) {
		byte[] encoded = StoredResponseCodec.encode(response, this.deflateFrom);
		Supplier<Boolean> update = () -> this.rows.owned(this.statements.complete(), id, ownerToken)
			.param("response", encoded)
			.update() == 1;
		if (joinsCurrentTransaction()) {
			String committing = this.completeCommitting;
			try {
				if (committing != null && committingLast()) {
					return this.runner.onCallerConnection(() -> CommittingWrites.run(this.runner.namedJdbc(),
							committing, JdbcRecordRows.ownedParameters(id, ownerToken).addValue("response", encoded)));
				}
				return this.runner.onCallerConnection(update);
			}
			catch (DataAccessException ex) {
				throw this.runner.failure("complete " + id, ex);
			}
		}
		return this.runner.oneStatement("complete", update);
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * On PostgreSQL, with its driver, when nothing but JDBC connections is bound to the
	 * thread and no transaction synchronization is registered, the completion's
	 * {@code UPDATE} (lease) or the record's {@code INSERT} (record-after-success) is
	 * sent with the {@code COMMIT}, in one round trip ({@link CommittingWrites}): a write
	 * that changes nothing aborts the transaction instead of committing it. A recording
	 * that meets a live record there cannot read it in the aborted transaction: it fails
	 * with a {@link TransactionConflictException}, after which the caller reads what was
	 * recorded.
	 */
	@Override
	public <T extends @Nullable Object> T lastInJoinedTransaction(Supplier<T> completion) {
		if (!this.emptyTransactionsTold) {
			return completion.get();
		}
		this.lastInTransaction.set(Boolean.TRUE);
		try {
			return completion.get();
		}
		finally {
			this.lastInTransaction.remove();
		}
	}

	/**
	 * Whether a completion joining the caller's transaction now is its last write and may
	 * commit it ({@link #lastInJoinedTransaction}).
	 */
	private boolean committingLast() {
		if (this.lastInTransaction.get() == null) {
			return false;
		}
		try {
			return EmptyTransactions.canCommitWithStatement(this.dataSource);
		}
		catch (SQLException ex) {
			return false;
		}
	}

	/**
	 * True with {@code transactionalCompletion} while a Spring transaction is active on
	 * this store's data source.
	 */
	@Override
	public boolean joinsCurrentTransaction() {
		return this.transactionalCompletion && this.runner.callerTransactionActive();
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

	@Override
	public boolean release(RecordId id, String ownerToken) {
		return this.runner.oneStatement("release",
				() -> this.rows.owned(this.statements.release(), id, ownerToken).update() == 1);
	}

	@Override
	public boolean heartbeat(RecordId id, String ownerToken, Duration lease) {
		return this.runner.oneStatement("heartbeat",
				() -> this.rows.owned(this.statements.heartbeat(), id, ownerToken)
					.param("leaseMicros", JdbcRecordRows.micros(lease))
					.update() == 1);
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
		byte[] encoded = StoredResponseCodec.encode(request.response(), this.deflateFrom);
		boolean joined = joinsCurrentTransaction();
		String committing = this.recordCommitting;
		if (joined && committing != null && committingLast()) {
			return recordedCommitting(committing, request, encoded);
		}
		for (int attempt = 1;; attempt++) {
			try {
				if (recorded(request, encoded, joined)) {
					return Optional.empty();
				}
				Optional<IdempotencyRecord> live = recordingStep(joined,
						() -> this.rows.read(this.statements.findCurrent(), request.id()));
				if (live.isPresent()) {
					return live;
				}
				if (recordingStep(joined,
						() -> this.rows.recordStatement(this.statements.recordOverExpired(), request, encoded)
							.update() == 1)) {
					return Optional.empty();
				}
			}
			catch (IdempotencyStoreException ex) {
				// A deadlock victim on its own rolled back and changed nothing; in the
				// caller's transaction it took the caller's work with it.
				if (joined || !JdbcReservations.isRetryable(ex.getCause()) || attempt >= MAX_ATTEMPTS) {
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
	 * The recording with the caller's {@code COMMIT}: recorded (and committed), or a
	 * record was there, which aborted the transaction before it could be read.
	 */
	private Optional<IdempotencyRecord> recordedCommitting(String committing, CompletedRecordRequest request,
			byte[] encoded) {
		boolean recorded;
		try {
			recorded = this.runner.onCallerConnection(() -> CommittingWrites.run(this.runner.namedJdbc(), committing,
					JdbcRecordRows.recordParameters(request, encoded)));
		}
		catch (DataAccessException ex) {
			throw this.runner.failure("record", ex);
		}
		if (!recorded) {
			throw new TransactionConflictException(
					"Idempotency record " + request.id()
							+ " was there as this one was recorded in the caller's transaction, which is rolled back",
					new IllegalStateException("record " + request.id() + " exists"));
		}
		return Optional.empty();
	}

	/**
	 * Runs the recording statement: whether it recorded. A duplicate key (the loser of a
	 * race on a new key, or any existing row on MariaDB/MySQL) rolled back only that
	 * statement and means a row is there.
	 */
	private boolean recorded(CompletedRecordRequest request, byte[] encoded, boolean joined) {
		try {
			return recordingStep(joined,
					() -> this.rows.recordStatement(this.statements.recordCompleted(), request, encoded).update() == 1);
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
			return this.runner.oneStatement("record", statement);
		}
		try {
			return this.runner.onCallerConnection(statement);
		}
		catch (DataAccessException ex) {
			throw this.runner.failure("record", ex);
		}
	}

	@Override
	public Optional<IdempotencyRecord> find(RecordId id) {
		return this.runner.oneStatement("find", () -> this.rows.read(this.statements.find(), id));
	}

	@Override
	public Optional<InspectedRecord> inspect(RecordId id) {
		return this.runner.oneStatement("inspect", () -> this.rows.inspect(this.statements.inspect(), id));
	}

	/**
	 * One query on the index of the key ({@code
	 *
	<table>
	 * _key_idx}), which the starter's changelog adds.
	 */
	@Override
	public List<InspectedRecord> inspectByKey(String key, int maxRecords) {
		return this.runner.oneStatement("inspectByKey",
				() -> this.rows.inspectByKey(this.statements.inspectByKey(), key, maxRecords));
	}

	@Override
	public boolean remove(RecordId id) {
		return this.runner.oneStatement("remove", () -> this.rows.keyed(this.statements.remove(), id).update() == 1);
	}

	@Override
	public int purgeExpired(int maxRecords) {
		if (maxRecords < 1) {
			return 0;
		}
		return this.runner.inOwnTransaction("purge",
				() -> this.rows.purge(this.statements.purge(), maxRecords).update());
	}

	@Override
	public String name() {
		return "jdbc";
	}

	/** The dialect this store speaks. */
	public JdbcIdempotencyDialect dialect() {
		return this.dialect;
	}

	/** Whether every reservation commits without waiting for its WAL flush. */
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

	/**
	 * The configuration of a {@link JdbcIdempotencyStore}, checked by {@link #build()}.
	 *
	 * @since 0.2.0
	 */
	public static final class Builder {

		private int deflateFrom = StoredResponseCodec.DEFAULT_DEFLATE_FROM;

		private final DataSource dataSource;

		private @Nullable JdbcIdempotencyDialect dialect;

		private String tableName = "idempotency_record";

		private boolean transactionalCompletion;

		private Duration queryTimeout = Duration.ofSeconds(2);

		private ReserveCommit reserveCommit = ReserveCommit.WITH_ATOMIC_COMPLETION;

		private Builder(DataSource dataSource) {
			this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
		}

		/**
		 * The SQL dialect of the database; detected from it by {@link #build()} when not
		 * set ({@link JdbcIdempotencyDialect#detect}).
		 */
		public Builder dialect(JdbcIdempotencyDialect dialect) {
			this.dialect = Objects.requireNonNull(dialect, "dialect");
			return this;
		}

		/** The table, a plain SQL identifier; {@code idempotency_record} by default. */
		public Builder tableName(String tableName) {
			this.tableName = Objects.requireNonNull(tableName, "tableName");
			return this;
		}

		/**
		 * Whether {@link JdbcIdempotencyStore#complete} and
		 * {@link JdbcIdempotencyStore#recordCompleted} join a Spring transaction active
		 * on the same data source, so that the completed record commits or rolls back
		 * with the business write; {@code false} by default.
		 */
		public Builder transactionalCompletion(boolean transactionalCompletion) {
			this.transactionalCompletion = transactionalCompletion;
			return this;
		}

		/**
		 * The longest the store waits for its database in one round trip; zero for no
		 * limit. It is the network timeout
		 * ({@link java.sql.Connection#setNetworkTimeout}) of each connection while the
		 * store holds it (the previous one is restored when the store releases it), so a
		 * call ends even when the server never reads the statement. Statements also get a
		 * JDBC query timeout of this in whole seconds, rounded up, plus one, which stops
		 * them on the server. Two seconds by default.
		 */
		public Builder queryTimeout(Duration queryTimeout) {
			this.queryTimeout = Objects.requireNonNull(queryTimeout, "queryTimeout");
			return this;
		}

		/**
		 * Which reservations commit without waiting for their WAL flush (PostgreSQL only:
		 * elsewhere every reservation is durable, and {@link ReserveCommit#ON} is
		 * refused). {@link ReserveCommit#WITH_ATOMIC_COMPLETION} by default.
		 */
		public Builder reserveCommit(ReserveCommit reserveCommit) {
			this.reserveCommit = Objects.requireNonNull(reserveCommit, "reserveCommit");
			return this;
		}

		/**
		 * The smallest answer body kept deflated, in bytes, when deflating makes it
		 * smaller; {@link StoredResponseCodec#NEVER_DEFLATE}: every body as it is. By
		 * default {@link StoredResponseCodec#DEFAULT_DEFLATE_FROM} (bodies deflated from
		 * 256 bytes).
		 * @since 0.2.0
		 */
		public Builder deflateFrom(int deflateFrom) {
			this.deflateFrom = StoredResponseCodec.checkDeflateFrom(deflateFrom);
			return this;
		}

		/**
		 * The store; detects the dialect first if none was set.
		 * @throws IllegalArgumentException for a table name that is not a plain SQL
		 * identifier, a negative query timeout, or {@link ReserveCommit#ON} on another
		 * database than PostgreSQL
		 */
		public JdbcIdempotencyStore build() {
			JdbcIdempotencyDialect.validateTableName(this.tableName);
			if (this.queryTimeout.isNegative()) {
				throw new IllegalArgumentException("Query timeout must not be negative, was " + this.queryTimeout);
			}
			JdbcIdempotencyDialect dialect = (this.dialect != null) ? this.dialect
					: JdbcIdempotencyDialect.detect(this.dataSource);
			// ReserveCommit.ON on another database is refused by the dialect
			return new JdbcIdempotencyStore(this, dialect);
		}

	}

}
