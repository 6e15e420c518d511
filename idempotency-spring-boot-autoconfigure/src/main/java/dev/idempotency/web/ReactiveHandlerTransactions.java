package dev.idempotency.web;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.Supplier;

import dev.idempotency.store.r2dbc.R2dbcIdempotencyStore;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;
import reactor.util.context.ContextView;

import org.springframework.transaction.ReactiveTransaction;
import org.springframework.transaction.ReactiveTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.reactive.TransactionContextManager;
import org.springframework.transaction.support.DefaultTransactionDefinition;

/**
 * Atomic completion for the WebFlux door, as {@link HandlerTransactions} for the Spring
 * MVC door: a protected handler runs inside a reactive transaction on the R2DBC store's
 * {@code ConnectionFactory} ({@code PROPAGATION_REQUIRED}, so the application's
 * {@code @Transactional} reactive methods and {@code TransactionalOperator}s on that
 * factory join it), and the door records the answer in that same transaction, just before
 * it commits; the held answer is sent only after the commit.
 * <p>
 * The transaction manager is the store's
 * {@link R2dbcIdempotencyStore#lazyTransactionManager() lazy one}: the transaction begins
 * in the database with its first statement, so a handler that writes nothing costs no
 * round trip for it. Only with the R2DBC store, and only while the store finds the door's
 * transaction in the Reactor context it is given (checked on the first protected
 * request); otherwise the door runs as without this, and a WARN says why.
 */
final class ReactiveHandlerTransactions {

	private static final Log logger = LogFactory.getLog(ReactiveHandlerTransactions.class);

	private final ReactiveTransactionManager transactionManager;

	private final R2dbcIdempotencyStore store;

	private final DefaultTransactionDefinition definition;

	private volatile boolean storeJoins = true;

	private volatile boolean checked;

	ReactiveHandlerTransactions(R2dbcIdempotencyStore store) {
		this(store.lazyTransactionManager(), store);
	}

	ReactiveHandlerTransactions(ReactiveTransactionManager transactionManager, R2dbcIdempotencyStore store) {
		this.transactionManager = transactionManager;
		this.store = store;
		this.definition = new DefaultTransactionDefinition(TransactionDefinition.PROPAGATION_REQUIRED);
		this.definition.setName("idempotency");
	}

	/** Whether protected handlers run in a transaction of the door (until found not). */
	boolean enabled() {
		return this.storeJoins;
	}

	/**
	 * Whether the store is known to join the door's transactions: checked on the first
	 * protected request, so {@code false} until then.
	 */
	boolean storeJoins() {
		return this.checked && this.storeJoins;
	}

	/**
	 * Runs {@code body} inside a transaction of the door, which {@code body} ends through
	 * {@link #commit} or {@link #rollback}; one it left open (it failed, or was
	 * cancelled) is rolled back. If the store turns out not to join it (the first request
	 * checks), it is rolled back at once and {@code body} is given {@code null}: it runs
	 * without.
	 */
	<T> Mono<T> inTransaction(Function<@Nullable Run, Mono<T>> body) {
		return Mono.deferContextual((context) -> {
			// Begun to its end even if the request is cancelled meanwhile: a begin
			// cancelled half-way keeps the connection it took from the pool for good.
			CompletableFuture<@Nullable Run> begun = this.transactionManager.getReactiveTransaction(this.definition)
				.flatMap((status) -> Mono.deferContextual((inside) -> Mono.just(new Run(status, inside))))
				.contextWrite(context)
				.toFuture();
			Mono<Run> transaction = Mono.fromFuture(begun, true).onErrorMap(NotBegun::new);
			return Mono.usingWhen(transaction, (run) -> {
				if (!this.checked) {
					boolean joins = joining(run, this.store::joinsCurrentTransaction);
					this.checked = true;
					if (!joins) {
						this.storeJoins = false;
						logger.warn("Atomic completion is off: the R2DBC idempotency store does not see the"
								+ " WebFlux door's transaction; protected handlers run without a shared transaction");
					}
				}
				if (!this.storeJoins) {
					return rollback(run).then(body.apply(null));
				}
				return body.apply(run);
			}, this::rollback, (run, error) -> rollback(run), this::rollback)
				// Cancelled before the transaction was handed over: it is
				// rolled back once begun (a rollback starts at once).
				.doOnCancel(() -> begun.thenAccept((run) -> {
					if (run != null) {
						rollback(run);
					}
				}));
		})
			.contextWrite(TransactionContextManager.getOrCreateContext())
			.contextWrite(TransactionContextManager.getOrCreateContextHolder());
	}

	/**
	 * Starts a call of the engine whose store call joins the run's transaction: the call
	 * is made on this thread, inside {@link R2dbcIdempotencyStore#joining}.
	 */
	<T> T joining(Run run, Supplier<T> call) {
		return R2dbcIdempotencyStore.joining(run.context, call);
	}

	/** Whether the run's transaction has sent nothing to the database yet. */
	boolean isEmpty(Run run) {
		return run.status.isNewTransaction() && joining(run, this.store::joinedTransactionIsEmpty);
	}

	/**
	 * Commits: starts at once and runs to its end, also for a request cancelled meanwhile
	 * ({@link #toTheEnd}).
	 * @return empty once committed; else the failure of the commit, which rolled the
	 * transaction back (logged at ERROR when the store failed,
	 * {@link TransactionFailures#isStoreFailure})
	 */
	Mono<Optional<Throwable>> commit(Run run, String what) {
		if (!run.end()) {
			return Mono.just(Optional.empty());
		}
		return toTheEnd(this.transactionManager.commit(run.status)
			.contextWrite(run.context)
			.then(Mono.fromSupplier(Optional::<Throwable>empty))
			.onErrorResume((ex) -> {
				String message = "The transaction of " + what + " did not commit; nothing of it was done";
				if (TransactionFailures.isStoreFailure(ex)) {
					logger.error(message, ex);
				}
				else if (logger.isDebugEnabled()) {
					logger.debug(message + ": the application's own writes failed", ex);
				}
				return Mono.just(Optional.of(ex));
			}));
	}

	/**
	 * Rolls back, unless it has ended already; a failure is logged. Starts at once and
	 * runs to its end, as {@link #commit} does.
	 */
	Mono<Void> rollback(Run run) {
		if (!run.end()) {
			return Mono.empty();
		}
		return toTheEnd(this.transactionManager.rollback(run.status).contextWrite(run.context).onErrorResume((ex) -> {
			logger.error("Could not roll back the transaction of a protected request", ex);
			return Mono.empty();
		}));
	}

	/**
	 * Starts the end of a transaction now and runs it to its end whatever happens to the
	 * request: a commit or a rollback cancelled half-way (the client went away while the
	 * answer was being recorded) would never give its connection back to the pool, and a
	 * few hundred such clients would leave none.
	 */
	private static <T> Mono<T> toTheEnd(Mono<T> end) {
		return Mono.fromFuture(end.toFuture(), true);
	}

	/**
	 * Whether the database rolled the transaction back to settle a conflict with another
	 * (SQLState class 40, through R2DBC or JDBC).
	 */
	static boolean isConflict(Throwable failure) {
		return R2dbcIdempotencyStore.isConflict(failure);
	}

	/**
	 * The door's transaction could not begin (no connection, say): nothing of the request
	 * ran.
	 */
	@SuppressWarnings("serial")
	static final class NotBegun extends RuntimeException {

		private final transient Throwable failure;

		NotBegun(Throwable failure) {
			super(null, failure, false, false);
			this.failure = failure;
		}

		/** Why, as the key's release logs it. */
		String reason() {
			return "its transaction could not begin: " + this.failure;
		}

		/** What failed. */
		Throwable failure() {
			return this.failure;
		}

	}

	/** One protected request's transaction. */
	static final class Run {

		private final ReactiveTransaction status;

		private final ContextView context;

		private final AtomicBoolean ended = new AtomicBoolean();

		Run(ReactiveTransaction status, ContextView context) {
			this.status = status;
			this.context = context;
		}

		boolean isRollbackOnly() {
			return this.status.isRollbackOnly();
		}

		/** Marks it ended: whether it was open. */
		private boolean end() {
			return this.ended.compareAndSet(false, true);
		}

		@Override
		public String toString() {
			return "transaction " + this.status;
		}

	}

}
