package dev.idempotency.store.r2dbc;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

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
		// The factory the application's transactions bind under, through any other
		// infrastructure proxy of the store's (a schema set-up waiting for its database).
		Object wrapped = this.delegate;
		while (wrapped instanceof InfrastructureProxy proxy) {
			wrapped = proxy.getWrappedObject();
		}
		return wrapped;
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
		if (connection instanceof LazyBeginConnection lazy) {
			Transaction transaction = lazy.transaction.get();
			return transaction != null && transaction.state.get() == Transaction.HELD;
		}
		return false;
	}

	/**
	 * One transaction of a connection, from its held begin to its end: {@code HELD}
	 * (nothing sent), {@code SENT} (its begin went out, or is going), {@code ENDED}. The
	 * state changes by compare-and-set only, so that a statement and the end of its
	 * transaction racing (a client gone away mid-handler: the door rolls back while a
	 * statement of the handler's, or of the store's running to its end, is on its way)
	 * never send a {@code BEGIN} after the end: that left a pooled connection inside an
	 * open transaction, where the next requests' auto-commit inserts were answered but
	 * never committed.
	 */
	static final class Transaction {

		static final int HELD = 0;

		static final int SENT = 1;

		static final int ENDED = 2;

		final AtomicInteger state = new AtomicInteger(HELD);

		/** The begin, sent once, by the first statement. */
		final Mono<Void> begin;

		Transaction(Mono<Void> begin) {
			this.begin = begin.cache();
		}

		/**
		 * The begin, before a statement of this transaction: sent by the first, waited
		 * for by the others; an error once the transaction has ended.
		 */
		Mono<Void> enter() {
			return Mono.defer(() -> {
				while (true) {
					int now = this.state.get();
					if (now == ENDED) {
						return Mono.error(new IllegalStateException(
								"the transaction this statement belongs to has ended; it was not sent"));
					}
					if (now == SENT || this.state.compareAndSet(HELD, SENT)) {
						return this.begin;
					}
				}
			});
		}

		/**
		 * Ends it: {@code end} after the begin if the begin went out, else nothing is
		 * sent.
		 */
		Mono<Void> end(Publisher<Void> end) {
			while (true) {
				int now = this.state.get();
				if (now == ENDED) {
					return Mono.empty();
				}
				if (this.state.compareAndSet(now, ENDED)) {
					return (now == SENT) ? this.begin.then(Mono.from(end)) : Mono.empty();
				}
			}
		}

	}

	/** A connection whose {@code beginTransaction} waits for its first statement. */
	static final class LazyBeginConnection implements Connection, Wrapped<Connection> {

		private final Connection delegate;

		/** The transaction under way, {@code null} when none is. */
		private final AtomicReference<@Nullable Transaction> transaction = new AtomicReference<>();

		private volatile boolean closed;

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
			return Mono.fromRunnable(() -> this.transaction.set(new Transaction(begin)));
		}

		/**
		 * {@code then}, after the begin of the transaction it was made in (or, made in
		 * none, of the one under way when it runs), if any: decided when it runs, not
		 * when it was made.
		 */
		private <T> Flux<T> begun(@Nullable Transaction madeIn, Publisher<T> then) {
			return Flux.defer(() -> {
				if (this.closed) {
					return Flux.error(new IllegalStateException("the connection was given back; nothing was sent"));
				}
				Transaction transaction = (madeIn != null) ? madeIn : this.transaction.get();
				return (transaction != null) ? transaction.enter().thenMany(then) : Flux.from(then);
			});
		}

		private <T> Flux<T> begun(Publisher<T> then) {
			return begun(this.transaction.get(), then);
		}

		/**
		 * Ends the transaction: through {@code end} if its begin went out, else with
		 * nothing sent.
		 */
		private Publisher<Void> end(Publisher<Void> end) {
			return Mono.defer(() -> {
				Transaction transaction = this.transaction.getAndSet(null);
				return (transaction != null) ? transaction.end(end) : Mono.from(end);
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
			return new LazyStatement(this.delegate.createStatement(sql), this.transaction.get());
		}

		@Override
		public Batch createBatch() {
			Batch batch = this.delegate.createBatch();
			Transaction madeIn = this.transaction.get();
			return new Batch() {

				@Override
				public Batch add(String sql) {
					batch.add(sql);
					return this;
				}

				@Override
				public Publisher<? extends Result> execute() {
					return begun(madeIn, Flux.defer(batch::execute));
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
			return (this.transaction.get() == null) && this.delegate.isAutoCommit();
		}

		/**
		 * Gives the connection back; a transaction whose begin went out and that was not
		 * ended (never so with Spring's transaction managers) is rolled back first, so
		 * that no connection goes back to the pool inside it.
		 */
		@Override
		public Publisher<Void> close() {
			return Mono.defer(() -> {
				this.closed = true;
				Transaction open = this.transaction.getAndSet(null);
				Mono<Void> ended = (open != null)
						? open.end(Mono.defer(() -> Mono.from(this.delegate.rollbackTransaction())))
							.onErrorResume((ex) -> Mono.empty())
						: Mono.empty();
				return ended.then(Mono.defer(() -> Mono.from(this.delegate.close())));
			});
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

			private final @Nullable Transaction madeIn;

			LazyStatement(Statement statement, @Nullable Transaction madeIn) {
				this.statement = statement;
				this.madeIn = madeIn;
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
				return begun(this.madeIn, Flux.defer(this.statement::execute));
			}

		}

	}

}
