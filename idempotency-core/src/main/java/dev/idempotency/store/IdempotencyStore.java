package dev.idempotency.store;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

/**
 * The storage SPI under the idempotency engine. Each method is one atomic transition,
 * judged by the store's own clock (never the caller's), so that several nodes agree on
 * leases and expiry.
 * <p>
 * Implementations throw {@link IdempotencyStoreException} (or any runtime exception) when
 * the store cannot be reached; the engine turns that into its store-failure policy.
 *
 * @since 0.1.0
 */
public interface IdempotencyStore {

	/**
	 * Reserves a record, atomically:
	 * <ul>
	 * <li>absent or expired: creates it {@code IN_PROGRESS}, owned by the request's
	 * token, lease and expiry counted from now: {@link ReserveResult.Acquired
	 * Acquired(false)};</li>
	 * <li>{@code IN_PROGRESS}, lease expired and the same fingerprint: takes it over (new
	 * owner, new lease, expiry unchanged): {@link ReserveResult.Acquired
	 * Acquired(true)};</li>
	 * <li>otherwise: changes nothing and returns the record:
	 * {@link ReserveResult.Existing}.</li>
	 * </ul>
	 */
	ReserveResult reserve(ReserveRequest request);

	/**
	 * {@link #reserve} for a caller that must not block (the reactive door): by default
	 * {@code reserve} runs on {@code executor}, a bounded one for blocking calls, never
	 * on the caller's thread; on the caller's thread for a store whose calls do not block
	 * ({@link #isBlocking()}). A store with a non-blocking client of its own overrides
	 * it.
	 * @param executor where a blocking store runs the call
	 * @since 0.1.0
	 */
	default CompletionStage<ReserveResult> reserveAsync(ReserveRequest request, Executor executor) {
		return call(() -> reserve(request), executor);
	}

	/**
	 * Stores the final response and marks the record completed, if {@code ownerToken}
	 * still owns it and it is in progress.
	 * @return whether the record was completed; {@code false} means another owner took
	 * over
	 */
	boolean complete(RecordId id, String ownerToken, StoredResponse response);

	/**
	 * {@link #complete} for a caller that must not block, as {@link #reserveAsync}.
	 * @param executor where a blocking store runs the call
	 * @since 0.1.0
	 */
	default CompletionStage<Boolean> completeAsync(RecordId id, String ownerToken, StoredResponse response,
			Executor executor) {
		return call(() -> complete(id, ownerToken, response), executor);
	}

	/**
	 * Deletes an in-progress record, if {@code ownerToken} still owns it, so that a retry
	 * runs the operation again.
	 * @return whether the record was deleted
	 */
	boolean release(RecordId id, String ownerToken);

	/**
	 * {@link #release} for a caller that must not block, as {@link #reserveAsync}.
	 * @param executor where a blocking store runs the call
	 * @since 0.1.0
	 */
	default CompletionStage<Boolean> releaseAsync(RecordId id, String ownerToken, Executor executor) {
		return call(() -> release(id, ownerToken), executor);
	}

	/**
	 * Extends the lease of an in-progress record to now + {@code lease}, if
	 * {@code ownerToken} still owns it.
	 * @return whether the lease was extended; {@code false} means ownership was lost
	 */
	boolean heartbeat(RecordId id, String ownerToken, Duration lease);

	/**
	 * Record-after-success mode: stores the final response of an operation that ran
	 * without a reservation, atomically and only if no live record holds the id:
	 * <ul>
	 * <li>absent or expired: creates it {@code COMPLETED} with the response, expiry
	 * counted from now by the store's clock; returns empty;</li>
	 * <li>otherwise (completed, or in progress under lease mode, whatever its
	 * fingerprint): changes nothing and returns the record, so the caller can answer what
	 * was recorded first.</li>
	 * </ul>
	 * One round trip (one write) where the store allows it.
	 */
	Optional<IdempotencyRecord> recordCompleted(CompletedRecordRequest request);

	/**
	 * {@link #recordCompleted} for a caller that must not block, as
	 * {@link #reserveAsync}.
	 * @param executor where a blocking store runs the call
	 * @since 0.1.0
	 */
	default CompletionStage<Optional<IdempotencyRecord>> recordCompletedAsync(CompletedRecordRequest request,
			Executor executor) {
		return call(() -> recordCompleted(request), executor);
	}

	/**
	 * Whether {@link #complete} and {@link #recordCompleted}, called now on this thread,
	 * would run inside a transaction active on it, so that the record commits or rolls
	 * back with the caller's own writes. Front doors that run inside a caller's
	 * transaction ask this: a store that would not join must not record a result before
	 * that transaction has committed. {@code false} unless a store says otherwise.
	 */
	default boolean joinsCurrentTransaction() {
		return false;
	}

	/**
	 * Whether the transaction that {@link #complete} and {@link #recordCompleted} would
	 * join now ({@link #joinsCurrentTransaction()}) has sent nothing to the database yet:
	 * the caller wrote nothing in it. A front door that began that transaction itself and
	 * would end it right after the completion may then end it first, with nothing to
	 * send, and complete alone: there is no write for the record to be atomic with, and
	 * the transaction's commit is not a round trip of its own. {@code false} when the
	 * store cannot tell, which is always safe.
	 * @since 0.1.0
	 */
	default boolean joinedTransactionIsEmpty() {
		return false;
	}

	/**
	 * Runs {@code completion}, a {@link #complete} or {@link #recordCompleted} of this
	 * store that joins the caller's transaction ({@link #joinsCurrentTransaction()}), as
	 * the last write of that transaction: the caller, which began the transaction,
	 * commits it right after, and nothing else runs in it. A store may then commit the
	 * transaction with its own write, in the same round trip, and leave the caller's
	 * commit nothing to send. Such a store keeps every answer of the two calls as they
	 * are, and a failure of that commit shows where the caller expects it: a conflict
	 * with another transaction and a failure of the database as the call's own failure
	 * (the caller rolls back, which then has nothing to undo); a failure of the caller's
	 * own writes checked at the commit (a deferred constraint) thrown by the caller's
	 * commit, as if it had failed there. The default runs {@code completion} as it is,
	 * which is always right.
	 * @param <T> what the completion gives
	 * @param completion the call of {@link #complete} or {@link #recordCompleted}
	 * @return what {@code completion} gave
	 * @since 0.2.0
	 */
	default <T extends @Nullable Object> T lastInJoinedTransaction(Supplier<T> completion) {
		return completion.get();
	}

	/** Reads a record that has not expired. */
	Optional<IdempotencyRecord> find(RecordId id);

	/**
	 * {@link #find} for a caller that must not block, as {@link #reserveAsync}.
	 * @since 0.1.0
	 */
	default CompletionStage<Optional<IdempotencyRecord>> findAsync(RecordId id, Executor executor) {
		return call(() -> find(id), executor);
	}

	/**
	 * Whether the store's calls may block the calling thread (network or disk I/O, a wait
	 * for a lock): then a caller that must not block runs them on a bounded executor.
	 * {@code true} unless a store says otherwise.
	 * @since 0.1.0
	 */
	default boolean isBlocking() {
		return true;
	}

	/**
	 * A call of this store for a caller that must not block: on {@code executor} if the
	 * store blocks, else at once.
	 */
	private <T> CompletionStage<T> call(Supplier<T> call, Executor executor) {
		if (isBlocking()) {
			return CompletableFuture.supplyAsync(call, executor);
		}
		try {
			return CompletableFuture.completedFuture(call.get());
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/**
	 * Reads a record that has not expired with what an operator needs besides it: its
	 * creation time and the token of its lease's owner. For the {@code idempotency}
	 * Actuator endpoint, not for the protocol.
	 * @throws UnsupportedOperationException if the store cannot (the default)
	 * @since 0.1.0
	 */
	default Optional<InspectedRecord> inspect(RecordId id) {
		throw new UnsupportedOperationException("The " + name() + " idempotency store cannot inspect a record");
	}

	/**
	 * Reads the records of a key that have not expired, in every scope, each as
	 * {@link #inspect} reads it, ordered by scope: for the {@code idempotency} Actuator
	 * endpoint, when an operator has a key from a client's log but does not know whom it
	 * belongs to. Not for the protocol.
	 * <p>
	 * A store implements it where it finds a key without its scope at the cost of a
	 * lookup (an index on the key, or its own memory); one that would have to read every
	 * record on its server keeps the default, and the operator names the scope.
	 * @param key the key as stored ({@link RecordId#key()})
	 * @param maxRecords the most records to read, at least 1
	 * @return at most {@code maxRecords} records, the first scopes in order
	 * @throws UnsupportedOperationException if the store finds a record only by its key
	 * and scope (the default)
	 * @since 0.1.0
	 */
	default List<InspectedRecord> inspectByKey(String key, int maxRecords) {
		throw new UnsupportedOperationException("The " + name()
				+ " idempotency store finds a record only by its key and scope: without the scope it would read every"
				+ " record");
	}

	/**
	 * Deletes a record that has not expired, whatever its state and owner: an operator's
	 * removal of a completed record, or release of a key in flight (its owner's later
	 * completion then finds no record and stores nothing). For the {@code idempotency}
	 * Actuator endpoint, not for the protocol.
	 * @return whether a live record was deleted
	 * @throws UnsupportedOperationException if the store cannot (the default)
	 * @since 0.1.0
	 */
	default boolean remove(RecordId id) {
		throw new UnsupportedOperationException("The " + name() + " idempotency store cannot remove a record");
	}

	/**
	 * Deletes up to {@code maxRecords} expired records. Safe to call from every node at
	 * once. Stores whose records expire natively return {@code 0}.
	 * @return how many records were deleted
	 */
	int purgeExpired(int maxRecords);

	/**
	 * A short name for metrics, health and logs, such as {@code memory}, {@code jdbc},
	 * {@code redis}.
	 */
	String name();

}
