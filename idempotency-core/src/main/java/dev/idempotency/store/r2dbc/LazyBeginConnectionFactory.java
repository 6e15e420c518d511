package dev.idempotency.store.r2dbc;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

import io.r2dbc.spi.Batch;
import io.r2dbc.spi.Connection;
import io.r2dbc.spi.ConnectionFactory;
import io.r2dbc.spi.ConnectionFactoryMetadata;
import io.r2dbc.spi.ConnectionMetadata;
import io.r2dbc.spi.IsolationLevel;
import io.r2dbc.spi.Result;
import io.r2dbc.spi.Statement;
import io.r2dbc.spi.TransactionDefinition;
import io.r2dbc.spi.ValidationDepth;
import io.r2dbc.spi.Wrapped;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import org.springframework.core.InfrastructureProxy;

/**
 * A {@link ConnectionFactory} whose connections begin a transaction in the database only
 * when its first statement goes out: {@code beginTransaction} is held back, sent just
 * before that statement, and a transaction that sent none ends with nothing sent (no
 * {@code BEGIN}, no {@code COMMIT}), as PostgreSQL's JDBC driver does on its own. An
 * {@code R2dbcTransactionManager} over it begins its transactions without a round trip;
 * an empty one costs taking a pooled connection and giving it back.
 * <p>
 * An {@link InfrastructureProxy} of the factory it wraps: Spring's reactive transactions
 * bind its connections under that factory, so the application's own transactions and its
 * {@code DatabaseClient} on that factory join them.
 */
final class LazyBeginConnectionFactory implements ConnectionFactory, InfrastructureProxy, Wrapped<ConnectionFactory> {

	private final ConnectionFactory delegate;

	LazyBeginConnectionFactory(ConnectionFactory delegate) {
		this.delegate = delegate;
	}

	@Override
	public Publisher<? extends Connection> create() {
		return Mono.from(this.delegate.create()).map(LazyBeginConnection::new);
	}

	@Override
	public ConnectionFactoryMetadata getMetadata() {
		return this.delegate.getMetadata();
	}

	@Override
	public Object getWrappedObject() {
		return this.delegate;
	}

	@Override
	public ConnectionFactory unwrap() {
		return this.delegate;
	}

	/**
	 * Whether {@code connection} is one of these whose transaction has sent nothing yet
	 * (begun, but not in the database).
	 */
	static boolean hasSentNothing(Connection connection) {
		return (connection instanceof LazyBeginConnection lazy) && lazy.pending != null && !lazy.sent.get();
	}

	/** A connection whose {@code beginTransaction} waits for its first statement. */
	static final class LazyBeginConnection implements Connection, Wrapped<Connection> {

		private final Connection delegate;

		/** The begin held back: {@code null} when none is. */
		private volatile @Nullable Mono<Void> pending;

		/** Whether the held begin was sent (or is being). */
		private final AtomicBoolean sent = new AtomicBoolean();

		LazyBeginConnection(Connection delegate) {
			this.delegate = delegate;
		}

		@Override
		public Publisher<Void> beginTransaction() {
			return hold(Mono.defer(() -> Mono.from(this.delegate.beginTransaction())));
		}

		@Override
		public Publisher<Void> beginTransaction(TransactionDefinition definition) {
			return hold(Mono.defer(() -> Mono.from(this.delegate.beginTransaction(definition))));
		}

		private Mono<Void> hold(Mono<Void> begin) {
			return Mono.fromRunnable(() -> {
				this.sent.set(false);
				// Once, however many statements wait for it.
				this.pending = begin.doOnSubscribe((subscription) -> this.sent.set(true)).cache();
			});
		}

		/** The held begin, if any, then {@code then}. */
		private <T> Flux<T> begun(Publisher<T> then) {
			Mono<Void> begin = this.pending;
			return (begin != null) ? begin.thenMany(then) : Flux.from(then);
		}

		/**
		 * Ends the transaction: through {@code end} if its begin went out, else with
		 * nothing sent.
		 */
		private Publisher<Void> end(Publisher<Void> end) {
			return Mono.defer(() -> {
				Mono<Void> begin = this.pending;
				boolean wasSent = this.sent.getAndSet(false);
				this.pending = null;
				return (begin == null || wasSent) ? Mono.from(end) : Mono.empty();
			});
		}

		@Override
		public Publisher<Void> commitTransaction() {
			return end(Mono.defer(() -> Mono.from(this.delegate.commitTransaction())));
		}

		@Override
		public Publisher<Void> rollbackTransaction() {
			return end(Mono.defer(() -> Mono.from(this.delegate.rollbackTransaction())));
		}

		@Override
		public Statement createStatement(String sql) {
			return new LazyStatement(this.delegate.createStatement(sql));
		}

		@Override
		public Batch createBatch() {
			Batch batch = this.delegate.createBatch();
			return new Batch() {

				@Override
				public Batch add(String sql) {
					batch.add(sql);
					return this;
				}

				@Override
				public Publisher<? extends Result> execute() {
					return begun(Flux.defer(batch::execute));
				}

			};
		}

		@Override
		public Publisher<Void> createSavepoint(String name) {
			return begun(Flux.defer(() -> this.delegate.createSavepoint(name)));
		}

		@Override
		public Publisher<Void> releaseSavepoint(String name) {
			return begun(Flux.defer(() -> this.delegate.releaseSavepoint(name)));
		}

		@Override
		public Publisher<Void> rollbackTransactionToSavepoint(String name) {
			return begun(Flux.defer(() -> this.delegate.rollbackTransactionToSavepoint(name)));
		}

		@Override
		public boolean isAutoCommit() {
			return (this.pending == null) && this.delegate.isAutoCommit();
		}

		@Override
		public Publisher<Void> close() {
			this.pending = null;
			return this.delegate.close();
		}

		@Override
		public ConnectionMetadata getMetadata() {
			return this.delegate.getMetadata();
		}

		@Override
		public IsolationLevel getTransactionIsolationLevel() {
			return this.delegate.getTransactionIsolationLevel();
		}

		@Override
		public Publisher<Void> setAutoCommit(boolean autoCommit) {
			return begun(Flux.defer(() -> this.delegate.setAutoCommit(autoCommit)));
		}

		@Override
		public Publisher<Void> setLockWaitTimeout(Duration timeout) {
			return this.delegate.setLockWaitTimeout(timeout);
		}

		@Override
		public Publisher<Void> setStatementTimeout(Duration timeout) {
			return this.delegate.setStatementTimeout(timeout);
		}

		@Override
		public Publisher<Void> setTransactionIsolationLevel(IsolationLevel isolationLevel) {
			return begun(Flux.defer(() -> this.delegate.setTransactionIsolationLevel(isolationLevel)));
		}

		@Override
		public Publisher<Boolean> validate(ValidationDepth depth) {
			return this.delegate.validate(depth);
		}

		@Override
		public Connection unwrap() {
			return this.delegate;
		}

		/** A statement that sends the held begin first. */
		private final class LazyStatement implements Statement {

			private final Statement statement;

			LazyStatement(Statement statement) {
				this.statement = statement;
			}

			@Override
			public Statement add() {
				this.statement.add();
				return this;
			}

			@Override
			public Statement bind(int index, Object value) {
				this.statement.bind(index, value);
				return this;
			}

			@Override
			public Statement bind(String name, Object value) {
				this.statement.bind(name, value);
				return this;
			}

			@Override
			public Statement bindNull(int index, Class<?> type) {
				this.statement.bindNull(index, type);
				return this;
			}

			@Override
			public Statement bindNull(String name, Class<?> type) {
				this.statement.bindNull(name, type);
				return this;
			}

			@Override
			public Statement returnGeneratedValues(String... columns) {
				this.statement.returnGeneratedValues(columns);
				return this;
			}

			@Override
			public Statement fetchSize(int rows) {
				this.statement.fetchSize(rows);
				return this;
			}

			@Override
			public Publisher<? extends Result> execute() {
				return begun(Flux.defer(this.statement::execute));
			}

		}

	}

}
