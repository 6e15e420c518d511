package dev.idempotency.store.r2dbc;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

import com.zaxxer.hikari.HikariDataSource;
import dev.idempotency.autoconfigure.jdbc.JdbcStoreTestSupport;
import dev.idempotency.store.CompletedRecordRequest;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.IdempotencyStoreException;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.RecordState;
import dev.idempotency.store.ReserveResult;
import dev.idempotency.store.contract.IdempotencyStoreContractTests;
import dev.idempotency.store.jdbc.JdbcIdempotencyDialect;
import dev.idempotency.test.servers.JdbcTestDatabase;
import io.r2dbc.pool.ConnectionPool;
import io.r2dbc.pool.ConnectionPoolConfiguration;
import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactories;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.ConnectionFactoryMetadata;
import io.r2dbc.spi.ConnectionFactoryOptions;
import io.r2dbc.spi.R2dbcNonTransientResourceException;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.reactivestreams.Publisher;
import reactor.blockhound.BlockHound;
import reactor.blockhound.BlockingOperationError;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The store contract on one database through R2DBC, the table made by the starter's
 * changelog (as the auto-configuration does where a JDBC URL is at hand), plus what only
 * the R2DBC store has: its asynchronous calls, made from a thread that must not block
 * with BlockHound installed, never block. Each subclass names its database; the database
 * (a schema or database of its own on the shared server) is made once per class and
 * dropped afterwards.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class AbstractR2dbcIdempotencyStoreTests extends IdempotencyStoreContractTests {

	static {
		// Any blocking call on a non-blocking thread (Reactor's parallel scheduler, the
		// drivers' Netty event loops) throws, but the two of MariaDB's driver that
		// MariaDbDriverBlockHoundIntegration allows (registered as a service).
		BlockHound.install();
	}

	static final String TABLE = "idempotency_record";

	/**
	 * Runs a task where it is handed over: a store that ran a blocking call on the
	 * executor it is given would block the caller's thread.
	 */
	private static final Executor CALLERS_THREAD = Runnable::run;

	/** 64 racing threads share these; a reservation holds a connection only briefly. */
	private static final int POOL_SIZE = 20;

	protected JdbcTestDatabase database;

	protected ConnectionPool connectionFactory;

	/** The test database, not yet created. */
	protected abstract JdbcTestDatabase testDatabase();

	/** The dialect the driver must be detected as. */
	protected abstract JdbcIdempotencyDialect expectedDialect();

	@BeforeAll
	void createDatabase() throws Exception {
		this.database = testDatabase().create();
		try (HikariDataSource schema = this.database.dataSource(1)) {
			assertThat(JdbcStoreTestSupport.createSchema(schema, TABLE)).isTrue();
		}
		this.connectionFactory = pool(POOL_SIZE);
	}

	/** A pool of up to {@code maxSize} connections to the test database. */
	protected ConnectionPool pool(int maxSize) {
		ConnectionPoolConfiguration.Builder pool = ConnectionPoolConfiguration
			.builder(ConnectionFactories.get(ConnectionFactoryOptions.parse(this.database.r2dbcUrl())
				.mutate()
				.option(ConnectionFactoryOptions.USER, this.database.user())
				.build()))
			.initialSize(1)
			.maxSize(maxSize);
		if (!nonBlockingDriver()) {
			// H2's driver opens its sessions on the calling thread, which may block.
			pool.allocatorSubscribeOn(Schedulers.boundedElastic());
		}
		return new ConnectionPool(pool.build());
	}

	@AfterAll
	void dropDatabase() throws Exception {
		try {
			if (this.connectionFactory != null) {
				this.connectionFactory.disposeLater().block(Duration.ofSeconds(10));
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
		return store(TABLE);
	}

	/**
	 * Over a factory that gets no connection, as a pool's when the database cannot be
	 * reached.
	 */
	@Override
	protected IdempotencyStore createUnreachableStore() {
		ConnectionFactoryMetadata metadata = this.connectionFactory.getMetadata();
		ConnectionFactory unreachable = new ConnectionFactory() {

			@Override
			public Publisher<? extends Connection> create() {
				return Mono.error(new R2dbcNonTransientResourceException("the database cannot be reached"));
			}

			@Override
			public ConnectionFactoryMetadata getMetadata() {
				return metadata;
			}

		};
		return R2dbcIdempotencyStore.builder(unreachable).tableName(TABLE).timeout(Duration.ofSeconds(10)).build();
	}

	protected R2dbcIdempotencyStore store(String table) {
		return R2dbcIdempotencyStore.builder(this.connectionFactory)
			.tableName(table)
			.timeout(Duration.ofSeconds(10))
			.build();
	}

	/** A store on the test table over {@code connections}, with {@code timeout}. */
	private static R2dbcIdempotencyStore store(ConnectionFactory connections, Duration timeout) {
		return R2dbcIdempotencyStore.builder(connections).tableName(TABLE).timeout(timeout).build();
	}

	/**
	 * Whether the driver sends its statements without blocking the calling thread: not
	 * H2's, which runs the embedded database on it.
	 */
	protected boolean nonBlockingDriver() {
		return true;
	}

	@Test
	void theDialectIsDetectedFromTheDriver() {
		assertThat(R2dbcIdempotencyStore.detect(this.connectionFactory)).isEqualTo(expectedDialect());
		assertThat(store(TABLE).dialect()).isEqualTo(expectedDialect());
	}

	/**
	 * The reactive doors call a non-blocking store in place on the event loop, and hand a
	 * blocking one's calls to a thread that may block: the store says which it is, from
	 * its driver.
	 */
	@Test
	void theStoreSaysWhetherItsDriverBlocks() {
		assertThat(store(TABLE).isBlocking()).isEqualTo(!nonBlockingDriver());
	}

	/** BlockHound is on: a blocking call on Reactor's parallel scheduler throws. */
	protected void assertABlockingCallOnANonBlockingThreadFails() {
		assertThatThrownBy(() -> onNonBlockingThread(() -> {
			try {
				Thread.sleep(1);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			return Mono.just(true).toFuture();
		})).rootCause().isInstanceOf(BlockingOperationError.class);
	}

	/**
	 * Every asynchronous call of the protocol, each started on a thread that must not
	 * block, and handed an executor that runs on that thread: none blocks, and each
	 * answers as its blocking twin does.
	 */
	protected void assertTheAsynchronousCallsNeverBlock() {
		R2dbcIdempotencyStore store = store(TABLE);
		RecordId id = newId();
		// Tokens are made here: a random UUID may read the system's entropy, which
		// blocks.
		String owner = token();
		String second = token();
		assertThat(onNonBlockingThread(() -> store.reserveAsync(request(id, "fp", owner, LONG_LEASE), CALLERS_THREAD)))
			.isEqualTo(new ReserveResult.Acquired(false));
		assertThat(onNonBlockingThread(() -> store.reserveAsync(request(id, "fp", second, LONG_LEASE), CALLERS_THREAD)))
			.as("in flight")
			.isInstanceOf(ReserveResult.Existing.class);
		assertThat(onNonBlockingThread(() -> store.completeAsync(id, owner, response(201, "{}"), CALLERS_THREAD)))
			.isTrue();
		Optional<IdempotencyRecord> found = onNonBlockingThread(() -> store.findAsync(id, CALLERS_THREAD));
		assertThat(found.orElseThrow().response()).isEqualTo(response(201, "{}"));

		RecordId released = newId();
		String releasing = token();
		onNonBlockingThread(() -> store.reserveAsync(request(released, "fp", releasing, LONG_LEASE), CALLERS_THREAD));
		assertThat(onNonBlockingThread(() -> store.releaseAsync(released, releasing, CALLERS_THREAD))).isTrue();
		assertThat(onNonBlockingThread(() -> store.findAsync(released, CALLERS_THREAD))).isEmpty();

		RecordId recorded = newId();
		CompletedRecordRequest recording = new CompletedRecordRequest(recorded, "fp", "contract-op",
				response(200, "{\"first\":1}"), RETENTION);
		assertThat(onNonBlockingThread(() -> store.recordCompletedAsync(recording, CALLERS_THREAD))).isEmpty();
		IdempotencyRecord first = onNonBlockingThread(() -> store.recordCompletedAsync(
				new CompletedRecordRequest(recorded, "fp", "contract-op", response(409, "{}"), RETENTION),
				CALLERS_THREAD))
			.orElseThrow();
		assertThat(first.state()).isEqualTo(RecordState.COMPLETED);
		assertThat(first.response()).isEqualTo(response(200, "{\"first\":1}"));
	}

	/**
	 * A call that runs out of time while its statement is in flight gives its connection
	 * back fit for the next call: on a pool of one connection, calls whose timeout (1 to
	 * 5 ms) ends them mid-statement are each followed by a call that gets its answer.
	 * Before, on MariaDB, the first statement cancelled in flight left the connection
	 * waiting for an answer that never came, and every later call on it ran out its own
	 * timeout.
	 */
	@Test
	void aCallThatRunsOutOfTimeLeavesItsConnectionFitForTheNextCall() {
		ConnectionPool single = pool(1);
		try {
			R2dbcIdempotencyStore store = store(single, Duration.ofSeconds(10));
			for (int i = 0; i < 25; i++) {
				R2dbcIdempotencyStore impatient = store(single, Duration.ofMillis(1 + i % 5));
				try {
					impatient.reserve(request(newId(), "fp", token(), LONG_LEASE));
				}
				catch (IdempotencyStoreException ex) {
					// ran out of time, as it was meant to
				}
				assertThat(store.reserve(request(newId(), "fp", token(), LONG_LEASE))).as("call %d after a timeout", i)
					.isEqualTo(new ReserveResult.Acquired(false));
			}
		}
		finally {
			single.disposeLater().block(Duration.ofSeconds(10));
		}
	}

	/**
	 * A reservation that the store's timeout gave up on (the request answered
	 * {@code 503}, nothing done), held back by a lock on the table until then, still
	 * completes once the lock is gone (its statement runs to its end): it is released, so
	 * that the key is free for the retry, not held for a whole lease with every retry
	 * answered in flight (an outside test found that).
	 * <p>
	 * The store and the reads that watch for the release share a pool of one connection:
	 * a read waits for the late statement's connection, so it sees the table after that
	 * statement committed, never before. Over a pool of their own, a read made in the
	 * instant between the unlock and the late insert's commit found no row, and the test
	 * looked once more while the row was still there (CI, loaded).
	 * @param lock the statement that locks the table, in a transaction of its own
	 * @param unlock the statement that unlocks it, {@code null} for the transaction's
	 * rollback
	 */
	protected void assertAReservationMadeAfterItsTimeoutIsReleased(String lock, @Nullable String unlock)
			throws Exception {
		ConnectionPool single = pool(1);
		try {
			R2dbcIdempotencyStore impatient = store(single, Duration.ofMillis(500));
			R2dbcIdempotencyStore behind = store(single, Duration.ofSeconds(10));
			RecordId id = newId();
			try (HikariDataSource locking = this.database.dataSource(1);
					java.sql.Connection connection = locking.getConnection()) {
				connection.setAutoCommit(false);
				connection.createStatement().execute(lock);
				assertThatExceptionOfType(IdempotencyStoreException.class)
					.isThrownBy(() -> impatient.reserve(request(id, "fp", token(), LONG_LEASE)))
					.withMessageContaining("no answer within");
				if (unlock != null) {
					connection.createStatement().execute(unlock);
				}
				connection.rollback();
			}
			long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
			while (behind.find(id).isPresent() && System.nanoTime() < deadline) {
				Thread.sleep(50);
			}
			assertThat(behind.find(id)).as("the late reservation, released").isEmpty();
			assertThat(behind.reserve(request(id, "fp", token(), LONG_LEASE)))
				.isEqualTo(new ReserveResult.Acquired(false));
		}
		finally {
			single.disposeLater().block(Duration.ofSeconds(10));
		}
	}

	/**
	 * A missing table is named in the store's failure (the health indicator's detail).
	 */
	@Test
	void aMissingTableIsNamed() {
		R2dbcIdempotencyStore missing = store("no_such_table");
		assertThatExceptionOfType(IdempotencyStoreException.class).isThrownBy(() -> missing.find(newId()))
			.withMessageContaining("table no_such_table not found");
	}

	/**
	 * Starts {@code call} on Reactor's parallel scheduler, whose threads must not block,
	 * and waits (on the test's thread) for what it completes with.
	 */
	private static <T> T onNonBlockingThread(Supplier<CompletionStage<T>> call) {
		return Mono.defer(() -> Mono.fromCompletionStage(call.get()))
			.subscribeOn(Schedulers.parallel())
			.block(Duration.ofSeconds(30));
	}

}
