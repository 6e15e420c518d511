package dev.idempotency.core.internal;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

import dev.idempotency.store.CompletedRecordRequest;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.StoredResponse;
import org.jspecify.annotations.Nullable;

/**
 * The step that finishes a run, as each mode takes it: at most one store call (complete,
 * release, record, or a read), then what its result, or its failure, decides: the run's
 * result, reported, and what the step gives (the answer of a run that succeeded). The
 * mode decides; the engine only drives the call, blocking ({@link #finish()}) or not
 * ({@link #finishAsync}: through the store's non-blocking variant, a blocking store's
 * call on the executor given). As {@link Lookup} for the first step, so the end of a run
 * is written once for both stacks.
 *
 * @param <A> what the step gives once decided
 */
abstract class Finishing<A extends @Nullable Object> {

	/** The step decided without a store call that gives nothing: one for all. */
	private static final Finishing<?> DONE = new Done<@Nullable Object>(null);

	/** A step decided without a store call (its result is reported already). */
	@SuppressWarnings("unchecked")
	static <A extends @Nullable Object> Finishing<A> done(A value) {
		return (value != null) ? new Done<>(value) : (Finishing<A>) DONE;
	}

	/** Makes the store call, if any, on this thread, and decides. */
	abstract A finish();

	/**
	 * Makes the store call, if any, through its non-blocking variant, and decides on the
	 * thread that completes it.
	 * @param executor where a blocking store runs the call
	 */
	abstract CompletableFuture<A> finishAsync(Executor executor);

	private static final class Done<A extends @Nullable Object> extends Finishing<A> {

		private final A value;

		Done(A value) {
			this.value = value;
		}

		@Override
		A finish() {
			return this.value;
		}

		@Override
		CompletableFuture<A> finishAsync(Executor executor) {
			return CompletableFuture.completedFuture(this.value);
		}

	}

	/**
	 * One store call, timed as {@code name}, then a decision on its result or on its
	 * failure: the same decision whichever way the call was made. It is itself the
	 * blocking call's {@link Supplier}, so the blocking path allocates nothing more than
	 * the step.
	 *
	 * @param <R> the result of the store call
	 * @param <A> what the step gives once decided
	 */
	abstract static class StoreCall<R, A extends @Nullable Object> extends Finishing<A> implements Supplier<R> {

		private final EngineReporter reporter;

		private final String name;

		StoreCall(EngineReporter reporter, String name) {
			this.reporter = reporter;
			this.name = name;
		}

		/** The store call, blocking. */
		abstract R call();

		/**
		 * The store call through the store's non-blocking variant.
		 * @param executor where a blocking store runs the call
		 */
		abstract CompletionStage<R> callAsync(Executor executor);

		/** What the call's result decides. */
		abstract A decide(R result);

		/** What a failure of the store call decides. */
		abstract A storeFailed(Exception ex);

		/** The blocking call, for {@link EngineReporter#timed}. */
		@Override
		public final R get() {
			return call();
		}

		@Override
		final A finish() {
			R result;
			try {
				result = this.reporter.timed(this.name, this);
			}
			catch (RuntimeException ex) {
				return storeFailed(ex);
			}
			return decide(result);
		}

		@Override
		final CompletableFuture<A> finishAsync(Executor executor) {
			CompletionStage<R> called;
			try {
				called = this.reporter.timedAsync(this.name, () -> callAsync(executor));
			}
			catch (RuntimeException ex) {
				// Such as a full executor: the store could not be asked.
				return CompletableFuture.completedFuture(storeFailed(ex));
			}
			return called.toCompletableFuture().handle((result, error) -> {
				if (error == null) {
					return decide(result);
				}
				Throwable cause = Lookup.cause(error);
				if (cause instanceof Exception ex) {
					return storeFailed(ex);
				}
				// An Error is not the store's answer: it propagates, as on the blocking
				// path.
				throw new CompletionException(cause);
			});
		}

	}

	/**
	 * Completes a lease-mode reservation ({@code complete}): what its result decides is
	 * the caller's.
	 */
	abstract static class Complete<A extends @Nullable Object> extends StoreCall<Boolean, A> {

		private final IdempotencyStore store;

		private final Reservation.Lease lease;

		private final StoredResponse response;

		Complete(EngineReporter reporter, IdempotencyStore store, Reservation.Lease lease, StoredResponse response) {
			super(reporter, "complete");
			this.store = store;
			this.lease = lease;
			this.response = response;
		}

		@Override
		final Boolean call() {
			return this.store.complete(this.lease.id(), this.lease.ownerToken(), this.response);
		}

		@Override
		final CompletionStage<Boolean> callAsync(Executor executor) {
			return this.store.completeAsync(this.lease.id(), this.lease.ownerToken(), this.response, executor);
		}

	}

	/**
	 * Records a completed answer in record-after-success mode ({@code recordCompleted}):
	 * what its result decides is the caller's.
	 */
	abstract static class RecordCompleted<A extends @Nullable Object>
			extends StoreCall<Optional<IdempotencyRecord>, A> {

		private final IdempotencyStore store;

		private final CompletedRecordRequest request;

		RecordCompleted(EngineReporter reporter, IdempotencyStore store, CompletedRecordRequest request) {
			super(reporter, "record_completed");
			this.store = store;
			this.request = request;
		}

		@Override
		final Optional<IdempotencyRecord> call() {
			return this.store.recordCompleted(this.request);
		}

		@Override
		final CompletionStage<Optional<IdempotencyRecord>> callAsync(Executor executor) {
			return this.store.recordCompletedAsync(this.request, executor);
		}

	}

}
