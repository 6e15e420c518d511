package dev.idempotency.store.r2dbc;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;

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
import dev.idempotency.store.jdbc.JdbcIdempotencyDialect;
import dev.idempotency.store.jdbc.JdbcIdempotencyStore;
import dev.idempotency.store.jdbc.JdbcIdempotencyStore.ReserveCommit;
import dev.idempotency.store.jdbc.JdbcIdempotencyStatements;
import dev.idempotency.store.jdbc.RecordColumns;
import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.ConnectionFactoryMetadata;
import io.r2dbc.spi.R2dbcException;
import io.r2dbc.spi.Row;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.util.context.ContextView;

import org.springframework.dao.DuplicateKeyException;
import org.springframework.r2dbc.BadSqlGrammarException;
import org.springframework.r2dbc.connection.ConnectionHolder;
import org.springframework.r2dbc.connection.R2dbcTransactionManager;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.transaction.NoTransactionException;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.reactive.TransactionSynchronizationManager;
import org.springframework.transaction.reactive.TransactionalOperator;
import org.springframework.transaction.support.DefaultTransactionDefinition;

/**
 * An {@link IdempotencyStore} in a relational database reached through R2DBC: the JDBC
 * store's table and its statements, per database ({@link JdbcIdempotencyDialect}: one
 * conditional write per transition, fenced by the owner token, judged by the database's
 * clock), sent through Spring's {@link DatabaseClient}, which writes each driver's own
 * bind markers for the statements' named parameters. The asynchronous methods
 * ({@link #reserveAsync} and the others) send their statements without blocking a thread;
 * the blocking ones wait for the same calls, for callers on threads that may block (the
 * heartbeat, the purge, the Actuator endpoint).
 * <p>
 * A call never joins a caller's reactive transaction by accident: a statement runs alone
 * in auto-commit, or in a transaction of its own ({@code REQUIRES_NEW}) when a
 * transaction is active in the caller's context, and the reservations of MariaDB and H2
 * (a write and a read of the locked row) and the purge run in a transaction of their own.
 * The one exception is the completion and the recording of a run started inside
 * {@link #joining}, which the reactive door uses for atomic completion: they join the
 * transaction of the context given, when it is on this store's {@code ConnectionFactory}.
 * Not (yet) supported: PostgreSQL's asynchronous commit of a reservation.
 * <p>
 * Built with {@link #builder(ConnectionFactory)}.
 *
 * @since 0.1.0
 */
public class R2dbcIdempotencyStore implements IdempotencyStore {

	private static final Log logger = LogFactory.getLog(R2dbcIdempotencyStore.class);

	private final ConnectionFactory connectionFactory;

	private final DatabaseClient client;

	private final JdbcIdempotencyDialect dialect;

	private final JdbcIdempotencyStatements statements;

	private final String table;

	/**
	 * MariaDB: a fresh key's reservation as one plain insert, and the read of a row that
	 * refused it.
	 */
	private final @Nullable List<String> reserveByInsert;

	private final Duration timeout;

	/** Which reservations commit without waiting for their WAL flush (PostgreSQL). */
	private final ReserveCommit reserveCommit;

	/**
	 * The reservation that commits asynchronously, for the requests that
	 * {@link #reserveCommit} allows it; {@code null} when none may.
	 */
	private final @Nullable List<String> asynchronousReserve;

	private final TransactionalOperator ownTransaction;

	/**
	 * Statements on the application's own factory, whose transactions the completion
	 * joins (on H2 {@link #client} uses a factory of its own).
	 */
	private final DatabaseClient joiningClient;

	/**
	 * The Reactor context of the caller whose transaction a completion joins, while
	 * {@link #joining} runs the call that starts it.
	 */
	private static final ThreadLocal<@Nullable ContextView> CALLER_CONTEXT = new ThreadLocal<>();

	/** The smallest body stored deflated, in bytes ({@link Builder#deflateFrom}). */
	private final int deflateFrom;

	R2dbcIdempotencyStore(Builder builder, JdbcIdempotencyDialect dialect) {
		this.connectionFactory = builder.connectionFactory;
		this.deflateFrom = builder.deflateFrom;
		ConnectionFactory statements = (dialect == JdbcIdempotencyDialect.H2) ? onBoundedElastic(this.connectionFactory)
				: this.connectionFactory;
		this.client = DatabaseClient.create(statements);
		this.dialect = dialect;
		this.table = builder.tableName;
		this.statements = dialect.statements(this.table);
		this.reserveByInsert = dialect.reserveByInsert(this.table);
		this.timeout = builder.timeout;
		this.reserveCommit = dialect.reserveCommit(builder.reserveCommit);
		this.asynchronousReserve = (this.reserveCommit != ReserveCommit.OFF)
				? dialect.asynchronousCommitReserve(this.table) : null;
		DefaultTransactionDefinition definition = new DefaultTransactionDefinition(
				TransactionDefinition.PROPAGATION_REQUIRES_NEW);
		this.ownTransaction = TransactionalOperator.create(new R2dbcTransactionManager(statements), definition);
		this.joiningClient = (statements == this.connectionFactory) ? this.client
				: DatabaseClient.create(this.connectionFactory);
	}

	/**
	 * A transaction manager on this store's {@code ConnectionFactory} whose transactions
	 * cost nothing in the database until their first statement: {@code BEGIN} goes out
	 * with it, and a transaction that sent none commits with nothing sent (the R2DBC
	 * drivers send {@code BEGIN} at once, and {@code COMMIT} for it, two round trips for
	 * a transaction that wrote nothing). Its transactions are bound under that factory,
	 * so the application's own transactions on it join them, and so does the completion
	 * of a run ({@link #joining}), which also tells whether one is still empty
	 * ({@link #joinedTransactionIsEmpty()}).
	 * @return a new transaction manager
	 * @since 0.1.0
	 */
	public R2dbcTransactionManager lazyTransactionManager() {
		return new R2dbcTransactionManager(new LazyBeginConnectionFactory(this.connectionFactory));
	}

	/**
	 * Runs {@code call}, which starts a store call of the engine on this thread (such as
	 * {@code IdempotencyEngine#succeededInTransactionAsync}), with the reactive
	 * transaction of {@code context} as the caller's: a completion or recording started
	 * by it joins that transaction when it is on this store's {@code ConnectionFactory}
	 * ({@link #joinsCurrentTransaction()} says whether it is), so the record commits or
	 * rolls back with the caller's writes. Nothing else of the store joins it.
	 * @param context the Reactor context of the caller's transactional publisher
	 * @param call what starts the store call
	 * @return what {@code call} returns
	 * @since 0.1.0
	 */
	public static <T> T joining(ContextView context, Supplier<T> call) {
		ContextView outer = CALLER_CONTEXT.get();
		CALLER_CONTEXT.set(context);
		try {
			return call.get();
		}
		finally {
			if (outer != null) {
				CALLER_CONTEXT.set(outer);
			}
			else {
				CALLER_CONTEXT.remove();
			}
		}
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Only inside {@link #joining}, when its context holds a reactive transaction on this
	 * store's {@code ConnectionFactory}.
	 */
	@Override
	public boolean joinsCurrentTransaction() {
		return joinedTransaction() != null;
	}

	/**
	 * {@inheritDoc}
	 * <p>
	 * Told for a transaction of {@link #lazyTransactionManager()} that has sent no
	 * statement yet.
	 */
	@Override
	public boolean joinedTransactionIsEmpty() {
		ConnectionHolder holder = joinedTransaction();
		return holder != null && LazyBeginConnectionFactory.hasSentNothing(holder.getConnection());
	}

	/**
	 * The context to join, when {@link #joining} runs and its context holds an active
	 * transaction on this store's {@code ConnectionFactory}; else {@code null}.
	 */
	private @Nullable ContextView joinedContext() {
		ContextView context = CALLER_CONTEXT.get();
		return (context != null && joinedTransaction(context) != null) ? context : null;
	}

	private @Nullable ConnectionHolder joinedTransaction() {
		ContextView context = CALLER_CONTEXT.get();
		return (context != null) ? joinedTransaction(context) : null;
	}

	/**
	 * The connection of the active transaction on this store's factory in
	 * {@code context}: read at once (the look-up completes as it is subscribed to).
	 */
	private @Nullable ConnectionHolder joinedTransaction(ContextView context) {
		AtomicReference<@Nullable ConnectionHolder> found = new AtomicReference<>();
		TransactionSynchronizationManager.forCurrentTransaction()
			// An actual transaction's connection (a connection bound only for reuse, in a
			// transaction context without one, is not).
			.mapNotNull((synchronization) -> synchronization.isActualTransactionActive()
					? synchronization.getResource(this.connectionFactory) : null)
			.onErrorResume(NoTransactionException.class, (ex) -> Mono.empty())
			.contextWrite(context)
			.subscribe((resource) -> {
				if (resource instanceof ConnectionHolder holder) {
					found.set(holder);
				}
			});
		return found.get();
	}

	/**
	 * Where H2's statements run: a thread of their own for each task at a time. Reactor's
	 * bounded elastic scheduler shares a thread between several workers once it has many:
	 * a statement waiting in H2 for a row lock (up to H2's lock timeout, 10 s) then held
	 * up, on the same thread, the work of the transaction that held the lock, and 16
	 * threads recording one key once ran out of the store's 10 s (CI, the H2 contract
	 * suite).
	 */
	private static final Scheduler H2_STATEMENTS = Schedulers
		.fromExecutorService(Executors.newCachedThreadPool((task) -> {
			Thread thread = new Thread(task, "idempotency-r2dbc-h2");
			thread.setDaemon(true);
			return thread;
		}), "idempotency-r2dbc-h2");

	/**
	 * H2's driver runs the embedded database on the thread that uses a connection, and a
	 * pool may hand a connection over on whatever thread released it (an event loop among
	 * them): each connection is used on a thread of {@link #H2_STATEMENTS}.
	 */
	private static ConnectionFactory onBoundedElastic(ConnectionFactory delegate) {
		return new ConnectionFactory() {

			@Override
			public Publisher<? extends Connection> create() {
				return Mono.from(delegate.create()).publishOn(H2_STATEMENTS);
			}

			@Override
			public ConnectionFactoryMetadata getMetadata() {
				return delegate.getMetadata();
			}

		};
	}

	/**
	 * A builder of a store whose table lives where {@code connectionFactory} connects,
	 * with the table {@code idempotency_record} and a timeout of two seconds; the dialect
	 * detected from the driver's name unless set.
	 * @param connectionFactory where the table lives
	 * @since 0.1.0
	 */
	public static Builder builder(ConnectionFactory connectionFactory) {
		return new Builder(connectionFactory);
	}

	// Reservation

	@Override
	public ReserveResult reserve(ReserveRequest request) {
		return await(reserveMono(request));
	}

	/**
	 * Never blocks: the statements go out on the driver's event loop (H2's driver runs
	 * them on the subscribing thread: then on {@code executor}).
	 */
	@Override
	public CompletionStage<ReserveResult> reserveAsync(ReserveRequest request, Executor executor) {
		return future(reserveMono(request), executor);
	}

	private Mono<ReserveResult> reserveMono(ReserveRequest request) {
		List<String> byInsert = this.reserveByInsert;
		if (byInsert == null) {
			return call("reserve", reserveAttempt(request, 1), (late) -> releaseLate(request, late));
		}
		// MariaDB: a fresh key in one statement, a taken one in two, no transaction; only
		// a row free to take (expired, or its lease over) goes on to the transaction.
		return call("reserve",
				alone(Mono.defer(() -> reserveByInsert(byInsert, request)))
					.flatMap((result) -> result.isPresent() ? Mono.just(result.get()) : reserveAttempt(request, 1)),
				(late) -> releaseLate(request, late));
	}

	/**
	 * A reservation made after its caller stopped waiting (the store's timeout: the
	 * request was answered {@code 503}, nothing done) is released at once: left, it would
	 * hold the key for a whole lease, every retry answered in flight although nothing
	 * runs.
	 */
	private void releaseLate(ReserveRequest request, ReserveResult late) {
		if (late instanceof ReserveResult.Acquired) {
			releaseMono(request.id(), request.ownerToken()).subscribe((released) -> {
			}, (ex) -> logger.warn("Could not release " + request.id() + ", reserved after its request was answered"
					+ " as the store's failure; it is free once its lease runs out", ex));
		}
	}

	/**
	 * A plain insert of the reservation; if the primary key refuses it, the row that is
	 * there: empty for a row free to take (or gone), to be reserved in a transaction.
	 */
	private Mono<Optional<ReserveResult>> reserveByInsert(List<String> byInsert, ReserveRequest request) {
		return reserveStatement(byInsert.get(0), request).fetch()
			.rowsUpdated()
			.map((inserted) -> Optional.<ReserveResult>of(new ReserveResult.Acquired(false)))
			.onErrorResume(DuplicateKeyException.class,
					(ex) -> reserveStatement(byInsert.get(1), request)
						.map((row, metadata) -> Optional.ofNullable(columns(row).reserveResult(request)))
						.one()
						.defaultIfEmpty(Optional.empty()));
	}

	/**
	 * One attempt, and the next when the row seen was missing or outdated, or the attempt
	 * lost a race (a duplicate key on H2, a deadlock): each such attempt rolled back and
	 * changed nothing.
	 */
	private Mono<ReserveResult> reserveAttempt(ReserveRequest request, int attempt) {
		List<String> sql = reserveSql(request);
		Mono<Optional<ReserveResult>> once = Mono.defer(() -> reserveOnce(sql, request));
		once = (sql.size() == 1) ? alone(once) : this.ownTransaction.transactional(once);
		return orAgain(once, attempt, request.id(), "reservation", () -> reserveAttempt(request, attempt + 1));
	}

	/**
	 * The statements of a reservation for this request: on PostgreSQL, one that commits
	 * without waiting for its WAL flush where {@link #reserveCommit} allows it (every
	 * reservation, or one whose run completes atomically: the door records its answer in
	 * the transaction of the handler's writes on this database, whose durable commit
	 * follows it in the same WAL).
	 */
	private List<String> reserveSql(ReserveRequest request) {
		List<String> asynchronous = this.asynchronousReserve;
		if (asynchronous != null && (this.reserveCommit == ReserveCommit.ON || request.atomicCompletion())) {
			return asynchronous;
		}
		return this.statements.reserve();
	}

	/**
	 * Which reservations commit without waiting for their WAL flush: always
	 * {@link ReserveCommit#OFF} but on PostgreSQL.
	 * @since 0.2.0
	 */
	public ReserveCommit reserveCommit() {
		return this.reserveCommit;
	}

	/**
	 * The reserve statements in order: empty when the row seen was missing or outdated.
	 */
	private Mono<Optional<ReserveResult>> reserveOnce(List<String> sql, ReserveRequest request) {
		Mono<Long> writes = Mono.just(0L);
		for (int i = 0; i < sql.size() - 1; i++) {
			String write = sql.get(i);
			writes = writes.then(reserveStatement(write, request).fetch().rowsUpdated());
		}
		String read = sql.get(sql.size() - 1);
		return writes.then(reserveStatement(read, request)
			.map((row, metadata) -> Optional.ofNullable(columns(row).reserveResult(request)))
			.one()
			.defaultIfEmpty(Optional.empty()));
	}

	// Completion, release, heartbeat

	@Override
	public boolean complete(RecordId id, String ownerToken, StoredResponse response) {
		return await(completeMono(id, ownerToken, response));
	}

	@Override
	public CompletionStage<Boolean> completeAsync(RecordId id, String ownerToken, StoredResponse response,
			Executor executor) {
		return future(completeMono(id, ownerToken, response), executor);
	}

	private Mono<Boolean> completeMono(RecordId id, String ownerToken, StoredResponse response) {
		byte[] encoded = StoredResponseCodec.encode(response, this.deflateFrom);
		ContextView joined = joinedContext();
		if (joined != null) {
			return call("complete", Mono
				.defer(() -> updated(owned(this.joiningClient, this.statements.complete(), id, ownerToken)
					.bind("response", ByteBuffer.wrap(encoded))))
				.contextWrite(joined));
		}
		return call("complete", alone(Mono.defer(() -> updated(
				owned(this.statements.complete(), id, ownerToken).bind("response", ByteBuffer.wrap(encoded))))));
	}

	@Override
	public boolean release(RecordId id, String ownerToken) {
		return await(releaseMono(id, ownerToken));
	}

	@Override
	public CompletionStage<Boolean> releaseAsync(RecordId id, String ownerToken, Executor executor) {
		return future(releaseMono(id, ownerToken), executor);
	}

	private Mono<Boolean> releaseMono(RecordId id, String ownerToken) {
		return call("release", alone(Mono.defer(() -> updated(owned(this.statements.release(), id, ownerToken)))));
	}

	@Override
	public boolean heartbeat(RecordId id, String ownerToken, Duration lease) {
		return await(call("heartbeat", alone(Mono.defer(() -> updated(owned(this.statements.heartbeat(), id, ownerToken)
			.bind("leaseMicros", JdbcIdempotencyStatements.micros(lease)))))));
	}

	// Record-after-success

	@Override
	public Optional<IdempotencyRecord> recordCompleted(CompletedRecordRequest request) {
		return await(recordCompletedMono(request));
	}

	@Override
	public CompletionStage<Optional<IdempotencyRecord>> recordCompletedAsync(CompletedRecordRequest request,
			Executor executor) {
		return future(recordCompletedMono(request), executor);
	}

	private Mono<Optional<IdempotencyRecord>> recordCompletedMono(CompletedRecordRequest request) {
		byte[] encoded = StoredResponseCodec.encode(request.response(), this.deflateFrom);
		ContextView joined = joinedContext();
		if (joined != null) {
			return call("record", recordJoined(request, encoded).contextWrite(joined));
		}
		return call("record", recordAttempt(request, encoded, 1));
	}

	/**
	 * The recording's statements in the caller's transaction, as {@link #recordAttempt}
	 * runs them alone, once: a statement that lost a race there (a deadlock) took the
	 * caller's work with it, and a row deleted between two statements is reported as a
	 * failure that rolls the caller back, never recorded twice.
	 */
	private Mono<Optional<IdempotencyRecord>> recordJoined(CompletedRecordRequest request, byte[] encoded) {
		return Mono.defer(
				() -> updated(recordStatement(this.joiningClient, this.statements.recordCompleted(), request, encoded)))
			// A duplicate key (MariaDB: any existing row) rolled back that statement
			// only.
			.onErrorResume(DuplicateKeyException.class, (ex) -> Mono.just(false))
			.flatMap((done) -> {
				if (done) {
					return Mono.just(Optional.<IdempotencyRecord>empty());
				}
				return read(this.joiningClient, this.statements.findCurrent(), request.id()).flatMap((live) -> {
					if (live.isPresent()) {
						return Mono.just(live);
					}
					return updated(
							recordStatement(this.joiningClient, this.statements.recordOverExpired(), request, encoded))
						.flatMap((over) -> over ? Mono.just(Optional.<IdempotencyRecord>empty())
								: Mono.error(new IdempotencyStoreException("Idempotency record " + request.id()
										+ " changed during its recording in the caller's transaction")));
				});
			});
	}

	/**
	 * The recording statement; after it found a row, a read of that row, or a replacement
	 * if it has expired; each decides atomically on its own, so each runs alone. Runs
	 * again when the row found was deleted before it could be read or replaced, or a
	 * statement lost a race.
	 */
	private Mono<Optional<IdempotencyRecord>> recordAttempt(CompletedRecordRequest request, byte[] encoded,
			int attempt) {
		Mono<Boolean> recorded = alone(
				Mono.defer(() -> updated(recordStatement(this.statements.recordCompleted(), request, encoded))))
			// A duplicate key (the loser of a race on a new key, or any existing row on
			// MariaDB) rolled back only that statement and means a row is there.
			.onErrorResume(DuplicateKeyException.class, (ex) -> Mono.just(false));
		Mono<Optional<Optional<IdempotencyRecord>>> once = recorded.flatMap((done) -> {
			if (done) {
				return Mono.just(Optional.of(Optional.<IdempotencyRecord>empty()));
			}
			return alone(Mono.defer(() -> read(this.statements.findCurrent(), request.id()))).flatMap((live) -> {
				if (live.isPresent()) {
					return Mono.just(Optional.of(live));
				}
				return alone(Mono
					.defer(() -> updated(recordStatement(this.statements.recordOverExpired(), request, encoded))))
					.map((over) -> over ? Optional.of(Optional.<IdempotencyRecord>empty())
							: Optional.<Optional<IdempotencyRecord>>empty());
			});
		});
		return orAgain(once, attempt, request.id(), "recording", () -> recordAttempt(request, encoded, attempt + 1));
	}

	// Reads

	@Override
	public Optional<IdempotencyRecord> find(RecordId id) {
		return await(findMono(id));
	}

	@Override
	public CompletionStage<Optional<IdempotencyRecord>> findAsync(RecordId id, Executor executor) {
		return future(findMono(id), executor);
	}

	private Mono<Optional<IdempotencyRecord>> findMono(RecordId id) {
		return call("find", alone(Mono.defer(() -> read(this.statements.find(), id))));
	}

	@Override
	public Optional<InspectedRecord> inspect(RecordId id) {
		return await(
				call("inspect",
						alone(Mono.defer(() -> keyed(this.statements.inspect(), id)
							.map((row, metadata) -> columns(row).inspected(id))
							.one()
							.map(Optional::of)
							.defaultIfEmpty(Optional.empty())))));
	}

	/** One query on the index of the key, which the starter's schema adds. */
	@Override
	public List<InspectedRecord> inspectByKey(String key, int maxRecords) {
		return await(call("inspectByKey",
				alone(Mono.defer(() -> this.client.sql(this.statements.inspectByKey())
					.bind("key", key)
					.bind("max", maxRecords)
					.map((row, metadata) -> columns(row)
						.inspected(new RecordId(Objects.requireNonNull(row.get("scope", String.class), "scope"), key)))
					.all()
					.collectList()))));
	}

	@Override
	public boolean remove(RecordId id) {
		return await(call("remove", alone(Mono.defer(() -> updated(keyed(this.statements.remove(), id))))));
	}

	@Override
	public int purgeExpired(int maxRecords) {
		if (maxRecords < 1) {
			return 0;
		}
		return await(call("purge",
				this.ownTransaction.transactional(Mono.defer(() -> this.client.sql(this.statements.purge())
					.bind("max", maxRecords)
					.fetch()
					.rowsUpdated()
					.map(Math::toIntExact)))));
	}

	/**
	 * {@code false} on PostgreSQL and MariaDB, whose drivers send the statements on their
	 * own event loops: a reactive door calls the asynchronous methods in place.
	 * {@code true} on H2, whose driver (r2dbc-h2) runs the embedded database on the
	 * calling thread.
	 */
	@Override
	public boolean isBlocking() {
		return this.dialect == JdbcIdempotencyDialect.H2;
	}

	@Override
	public String name() {
		return "r2dbc";
	}

	/** The dialect this store speaks. */
	public JdbcIdempotencyDialect dialect() {
		return this.dialect;
	}

	// Statements

	private DatabaseClient.GenericExecuteSpec keyed(String sql, RecordId id) {
		return keyed(this.client, sql, id);
	}

	private static DatabaseClient.GenericExecuteSpec keyed(DatabaseClient client, String sql, RecordId id) {
		return bind(bind(client.sql(sql), sql, "scope", id.scope()), sql, "key", id.key());
	}

	private DatabaseClient.GenericExecuteSpec owned(String sql, RecordId id, String ownerToken) {
		return owned(this.client, sql, id, ownerToken);
	}

	private static DatabaseClient.GenericExecuteSpec owned(DatabaseClient client, String sql, RecordId id,
			String ownerToken) {
		return bind(keyed(client, sql, id), sql, "owner", ownerToken);
	}

	private DatabaseClient.GenericExecuteSpec reserveStatement(String sql, ReserveRequest request) {
		DatabaseClient.GenericExecuteSpec statement = keyed(sql, request.id());
		statement = bind(statement, sql, "fingerprint", request.fingerprint());
		statement = bind(statement, sql, "operation", request.operation());
		statement = bind(statement, sql, "owner", request.ownerToken());
		statement = bind(statement, sql, "leaseMicros", JdbcIdempotencyStatements.micros(request.lease()));
		return bind(statement, sql, "retentionMicros", JdbcIdempotencyStatements.micros(request.retention()));
	}

	private DatabaseClient.GenericExecuteSpec recordStatement(String sql, CompletedRecordRequest request,
			byte[] encoded) {
		return recordStatement(this.client, sql, request, encoded);
	}

	private static DatabaseClient.GenericExecuteSpec recordStatement(DatabaseClient client, String sql,
			CompletedRecordRequest request, byte[] encoded) {
		DatabaseClient.GenericExecuteSpec statement = keyed(client, sql, request.id());
		statement = bind(statement, sql, "fingerprint", request.fingerprint());
		statement = bind(statement, sql, "operation", request.operation());
		statement = bind(statement, sql, "retentionMicros", JdbcIdempotencyStatements.micros(request.retention()));
		return bind(statement, sql, "response", ByteBuffer.wrap(encoded));
	}

	/**
	 * Binds a parameter that {@code sql} names. A statement of a transition does not name
	 * every parameter of it (the read after MariaDB's and H2's reserve write names
	 * neither the operation nor the retention), and a parameter the SQL does not name
	 * would reach the driver, which refuses it.
	 */
	private static DatabaseClient.GenericExecuteSpec bind(DatabaseClient.GenericExecuteSpec statement, String sql,
			String name, Object value) {
		return names(sql, name) ? statement.bind(name, value) : statement;
	}

	private static boolean names(String sql, String name) {
		String marker = ":" + name;
		for (int at = sql.indexOf(marker); at >= 0; at = sql.indexOf(marker, at + 1)) {
			int end = at + marker.length();
			if (end == sql.length() || !Character.isJavaIdentifierPart(sql.charAt(end))) {
				return true;
			}
		}
		return false;
	}

	private static Mono<Boolean> updated(DatabaseClient.GenericExecuteSpec statement) {
		return statement.fetch().rowsUpdated().map((count) -> count == 1);
	}

	private Mono<Optional<IdempotencyRecord>> read(String sql, RecordId id) {
		return read(this.client, sql, id);
	}

	private static Mono<Optional<IdempotencyRecord>> read(DatabaseClient client, String sql, RecordId id) {
		return keyed(client, sql, id).map((row, metadata) -> columns(row).record(id))
			.one()
			.map(Optional::of)
			.defaultIfEmpty(Optional.empty());
	}

	// How a call runs

	/**
	 * A call that is atomic on its own: alone in auto-commit, or in a transaction of its
	 * own when a transaction is active in the caller's context (which it would join
	 * otherwise).
	 */
	private <T> Mono<T> alone(Mono<T> statement) {
		return TransactionSynchronizationManager.forCurrentTransaction()
			.map((synchronization) -> synchronization.hasResource(this.connectionFactory))
			.onErrorResume(NoTransactionException.class, (ex) -> Mono.just(false))
			.flatMap((inTransaction) -> inTransaction ? this.ownTransaction.transactional(statement) : statement);
	}

	/**
	 * One attempt's result, or the next attempt when it saw no row or an outdated one, or
	 * failed in a way that changed nothing ({@link JdbcIdempotencyStatements#retryable}),
	 * up to {@link JdbcIdempotencyStatements#MAX_ATTEMPTS}.
	 */
	private static <T> Mono<T> orAgain(Mono<Optional<T>> once, int attempt, RecordId id, String step,
			Supplier<Mono<T>> next) {
		return once
			.onErrorResume(
					(ex) -> JdbcIdempotencyStatements.retryable(ex) && attempt < JdbcIdempotencyStatements.MAX_ATTEMPTS,
					(ex) -> Mono.just(Optional.empty()))
			.flatMap((result) -> {
				if (result.isPresent()) {
					return Mono.just(result.get());
				}
				if (attempt >= JdbcIdempotencyStatements.MAX_ATTEMPTS) {
					return Mono.error(new IdempotencyStoreException("Idempotency record " + id
							+ " kept changing during " + step + "; gave up after " + attempt + " attempts"));
				}
				return next.get();
			});
	}

	/** A call with the store's timeout, its failures as store failures. */
	private <T> Mono<T> call(String action, Mono<T> call) {
		return call(action, call, null);
	}

	/**
	 * A call with the store's timeout, its failures as store failures; {@code late} gets
	 * a result that came after the caller stopped waiting, to undo what the caller was
	 * told did not happen.
	 */
	private <T> Mono<T> call(String action, Mono<T> call, @Nullable Consumer<T> late) {
		return Mono.defer(() -> {
			// Delivered past the timeout, or given up on (timed out, cancelled):
			// whichever
			// comes first decides whether the caller or {@code late} has the result.
			AtomicBoolean decided = new AtomicBoolean();
			Mono<T> whole = runToItsEnd(call, (late != null) ? (value) -> {
				if (decided.compareAndSet(false, true)) {
					late.accept(value);
				}
			} : null);
			Mono<T> timed = this.timeout.isZero() ? whole : whole.timeout(this.timeout);
			if (late != null) {
				timed = timed.doOnNext((value) -> decided.set(true));
			}
			return timed.onErrorMap((ex) -> !(ex instanceof IdempotencyStoreException), (ex) -> failure(action, ex));
		});
	}

	/**
	 * The call, run to its end even when its caller stops waiting for it (the store's
	 * timeout, a subscriber that cancels): the caller gets its failure at once, and the
	 * call's statements finish, so that their connection goes back to the pool after an
	 * answer, as always. A statement cancelled in flight can leave its connection waiting
	 * for an answer that never comes (r2dbc-mariadb), and the pool would hand that
	 * connection to the next calls, each of which then ran out its own timeout.
	 */
	private static <T> Mono<T> runToItsEnd(Mono<T> call, @Nullable Consumer<T> late) {
		return Mono.deferContextual((context) -> {
			CompletableFuture<@Nullable T> running = call.contextWrite(context).toFuture();
			Mono<T> result = Mono.fromFuture(running, true);
			return (late != null) ? result.doOnCancel(() -> running.thenAccept((value) -> {
				// a call that completed empty has nothing to undo
				if (value != null) {
					late.accept(value);
				}
			})) : result;
		});
	}

	private IdempotencyStoreException failure(String action, Throwable ex) {
		if (isConflict(ex)) {
			return new TransactionConflictException("Idempotency store failed to " + action
					+ ": the database rolled its transaction back to settle a conflict with another one", ex);
		}
		if (ex instanceof TimeoutException) {
			return new IdempotencyStoreException(
					"Idempotency store failed to " + action + ": no answer within " + this.timeout, ex);
		}
		String problem = (ex instanceof BadSqlGrammarException)
				? ": table " + this.table + " not found (or not the starter's schema)" : "";
		return new IdempotencyStoreException("Idempotency store failed to " + action + problem, ex);
	}

	/**
	 * Whether {@code failure}, or a cause of it, is the database settling a conflict
	 * between transactions: an R2DBC exception with SQLState class 40 except
	 * {@code 40003}, as {@link TransactionConflictException#isConflict} says for JDBC.
	 * @param failure what a call or a commit failed with
	 * @return whether it is such a conflict
	 * @since 0.1.0
	 */
	public static boolean isConflict(Throwable failure) {
		Throwable cause = failure;
		for (int depth = 0; cause != null && depth < 32; depth++, cause = cause.getCause()) {
			if (cause instanceof R2dbcException r2dbc && r2dbc.getSqlState() != null
					&& r2dbc.getSqlState().startsWith("40") && !r2dbc.getSqlState().equals("40003")) {
				return true;
			}
		}
		return TransactionConflictException.isConflict(failure);
	}

	/**
	 * Waits for a call, for a caller that may block. Timed by {@link #call}; the extra
	 * second only guards against a driver that never signals.
	 */
	private <T> T await(Mono<T> call) {
		T result = this.timeout.isZero() ? call.block() : call.block(this.timeout.plusSeconds(1));
		if (result == null) {
			throw new IdempotencyStoreException("Idempotency store call completed without a result");
		}
		return result;
	}

	/**
	 * A call for a caller that must not block: subscribed to at once, its result
	 * completes the stage on the driver's thread; with a driver that blocks the
	 * subscribing thread (H2's, {@link #isBlocking()}), subscribed on {@code executor}
	 * instead.
	 */
	private <T> CompletionStage<T> future(Mono<T> call, Executor executor) {
		Mono<T> subscribed = isBlocking() ? call.subscribeOn(Schedulers.fromExecutor(executor)) : call;
		return subscribed.toFuture().thenApply((result) -> Objects.requireNonNull(result, "result"));
	}

	/** The columns of an R2DBC row, whatever Java type the driver chose for them. */
	private static RecordColumns<RuntimeException> columns(Row row) {
		return new RecordColumns<>() {

			@Override
			public @Nullable String string(String column) {
				return row.get(column, String.class);
			}

			@Override
			public byte @Nullable [] bytes(String column) {
				// The one binary type every driver decodes a BYTEA or BLOB column into.
				ByteBuffer value = row.get(column, ByteBuffer.class);
				if (value == null) {
					return null;
				}
				byte[] bytes = new byte[value.remaining()];
				value.get(bytes);
				return bytes;
			}

			@Override
			public boolean bool(String column) {
				Object value = row.get(column);
				if (value instanceof Boolean bool) {
					return bool;
				}
				// MariaDB: a comparison is 0 or 1.
				return (value instanceof Number number) && number.longValue() != 0;
			}

			@Override
			public @Nullable Instant instant(String column) {
				Object value = row.get(column);
				if (value == null) {
					return null;
				}
				if (value instanceof OffsetDateTime offset) {
					return offset.toInstant();
				}
				if (value instanceof ZonedDateTime zoned) {
					return zoned.toInstant();
				}
				if (value instanceof Instant instant) {
					return instant;
				}
				if (value instanceof LocalDateTime local) {
					// MariaDB: DATETIME(6) written in UTC.
					return local.toInstant(ZoneOffset.UTC);
				}
				throw new IllegalStateException(
						"Column " + column + " is a " + value.getClass().getName() + ", not a timestamp");
			}

		};
	}

	/**
	 * The configuration of an {@link R2dbcIdempotencyStore}, checked by {@link #build()}.
	 *
	 * @since 0.1.0
	 */
	public static final class Builder {

		private int deflateFrom = StoredResponseCodec.DEFAULT_DEFLATE_FROM;

		private final ConnectionFactory connectionFactory;

		private @Nullable JdbcIdempotencyDialect dialect;

		private String tableName = "idempotency_record";

		private Duration timeout = Duration.ofSeconds(2);

		private ReserveCommit reserveCommit = ReserveCommit.WITH_ATOMIC_COMPLETION;

		private Builder(ConnectionFactory connectionFactory) {
			this.connectionFactory = Objects.requireNonNull(connectionFactory, "connectionFactory");
		}

		/**
		 * The SQL dialect of the database; detected from the driver's name by
		 * {@link #build()} when not set ({@link R2dbcIdempotencyStore#detect}).
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
		 * The longest one call (a transition, with the attempts it runs again) waits for
		 * the database; zero for no limit. Two seconds by default.
		 */
		public Builder timeout(Duration timeout) {
			this.timeout = Objects.requireNonNull(timeout, "timeout");
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
		 * Which reservations commit without waiting for their WAL flush, as the JDBC
		 * store's ({@link JdbcIdempotencyStore.Builder#reserveCommit}): PostgreSQL only
		 * (elsewhere every reservation is durable, and {@link ReserveCommit#ON} is
		 * refused). {@link ReserveCommit#WITH_ATOMIC_COMPLETION} by default: the
		 * reservations the WebFlux door makes for a run it completes atomically.
		 * @since 0.2.0
		 */
		public Builder reserveCommit(ReserveCommit reserveCommit) {
			this.reserveCommit = Objects.requireNonNull(reserveCommit, "reserveCommit");
			return this;
		}

		/**
		 * The store; detects the dialect first if none was set.
		 * @throws IllegalArgumentException for a table name that is not a plain SQL
		 * identifier, a negative timeout, or {@link ReserveCommit#ON} on another database
		 * than PostgreSQL
		 */
		public R2dbcIdempotencyStore build() {
			JdbcIdempotencyDialect.validateTableName(this.tableName);
			if (this.timeout.isNegative()) {
				throw new IllegalArgumentException("Timeout must not be negative, was " + this.timeout);
			}
			JdbcIdempotencyDialect dialect = (this.dialect != null) ? this.dialect : detect(this.connectionFactory);
			// ReserveCommit.ON on another database is refused by the dialect
			return new R2dbcIdempotencyStore(this, dialect);
		}

	}

	/**
	 * The dialect of the database {@code connectionFactory} connects to, from its
	 * driver's name ({@link io.r2dbc.spi.ConnectionFactoryMetadata#getName()}), without
	 * connecting.
	 * @param connectionFactory the connection factory of the store
	 * @return the dialect
	 * @throws IllegalStateException if the database is not one the store supports
	 * @since 0.1.0
	 */
	public static JdbcIdempotencyDialect detect(ConnectionFactory connectionFactory) {
		String name = connectionFactory.getMetadata().getName();
		return dialectOf(name, (product) -> new IllegalStateException("The R2DBC idempotency store does not support '"
				+ product + "'; supported: PostgreSQL, MariaDB, MySQL, H2 (set the dialect to force one)"));
	}

	private static JdbcIdempotencyDialect dialectOf(String driver,
			Function<String, IllegalStateException> unsupported) {
		String name = driver.trim().toLowerCase(java.util.Locale.ROOT);
		if (name.contains("postgres")) {
			return JdbcIdempotencyDialect.POSTGRESQL;
		}
		if (name.contains("mariadb") || name.contains("mysql")) {
			return JdbcIdempotencyDialect.MARIADB;
		}
		if (name.equals("h2")) {
			return JdbcIdempotencyDialect.H2;
		}
		throw unsupported.apply(driver);
	}

}
