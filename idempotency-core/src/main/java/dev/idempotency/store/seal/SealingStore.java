package dev.idempotency.store.seal;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.function.Supplier;

import dev.idempotency.store.CompletedRecordRequest;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.InspectedRecord;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.RecordState;
import dev.idempotency.store.ReserveRequest;
import dev.idempotency.store.ReserveResult;
import dev.idempotency.store.StoredResponse;
import dev.idempotency.store.StoredResponseCodec;
import dev.idempotency.store.StoredResponseIntegrityException;
import org.jspecify.annotations.Nullable;

/**
 * A store as the engine uses it: every answer {@link Sealing#seal sealed} on its way in
 * and {@link Sealing#open opened} on its way out, whatever the store beneath (in-memory,
 * JDBC, Redis, or an application's own), which keeps a sealed answer without knowing it
 * is one. A completed record whose answer does not open is never returned: the call
 * throws a {@link StoredResponseIntegrityException} naming the record, and the engine
 * refuses the request. An answer that the store beneath cannot decode is reported the
 * same way.
 *
 * @since 0.1.0
 */
public final class SealingStore implements IdempotencyStore {

	private final IdempotencyStore delegate;

	private final Sealing sealing;

	/**
	 * The store beneath, sealed as {@code sealing} says.
	 * @param delegate the store that keeps the records
	 * @param sealing how answers are sealed
	 */
	public SealingStore(IdempotencyStore delegate, Sealing sealing) {
		this.delegate = delegate;
		this.sealing = sealing;
	}

	/** The store that keeps the records. */
	public IdempotencyStore delegate() {
		return this.delegate;
	}

	/**
	 * The store that keeps the records beneath {@code store}: its delegate for a
	 * {@link SealingStore}, else the store itself.
	 * @param store a store, sealing or not
	 * @return the store beneath
	 */
	public static IdempotencyStore unwrap(IdempotencyStore store) {
		return (store instanceof SealingStore sealingStore) ? sealingStore.delegate : store;
	}

	@Override
	public ReserveResult reserve(ReserveRequest request) {
		ReserveResult result = read(request.id(), () -> this.delegate.reserve(request));
		return (result instanceof ReserveResult.Existing existing)
				? new ReserveResult.Existing(opened(existing.record())) : result;
	}

	@Override
	public CompletionStage<ReserveResult> reserveAsync(ReserveRequest request, Executor executor) {
		return readAsync(request.id(), this.delegate.reserveAsync(request, executor))
			.thenApply((result) -> (result instanceof ReserveResult.Existing existing)
					? new ReserveResult.Existing(opened(existing.record())) : result);
	}

	@Override
	public boolean complete(RecordId id, String ownerToken, StoredResponse response) {
		return this.delegate.complete(id, ownerToken, this.sealing.seal(id, response));
	}

	@Override
	public CompletionStage<Boolean> completeAsync(RecordId id, String ownerToken, StoredResponse response,
			Executor executor) {
		return this.delegate.completeAsync(id, ownerToken, this.sealing.seal(id, response), executor);
	}

	@Override
	public boolean release(RecordId id, String ownerToken) {
		return this.delegate.release(id, ownerToken);
	}

	@Override
	public CompletionStage<Boolean> releaseAsync(RecordId id, String ownerToken, Executor executor) {
		return this.delegate.releaseAsync(id, ownerToken, executor);
	}

	@Override
	public boolean heartbeat(RecordId id, String ownerToken, Duration lease) {
		return this.delegate.heartbeat(id, ownerToken, lease);
	}

	@Override
	public Optional<IdempotencyRecord> recordCompleted(CompletedRecordRequest request) {
		CompletedRecordRequest sealed = new CompletedRecordRequest(request.id(), request.fingerprint(),
				request.operation(), this.sealing.seal(request.id(), request.response()), request.retention());
		return read(request.id(), () -> this.delegate.recordCompleted(sealed)).map(this::opened);
	}

	@Override
	public CompletionStage<Optional<IdempotencyRecord>> recordCompletedAsync(CompletedRecordRequest request,
			Executor executor) {
		CompletedRecordRequest sealed = new CompletedRecordRequest(request.id(), request.fingerprint(),
				request.operation(), this.sealing.seal(request.id(), request.response()), request.retention());
		return readAsync(request.id(), this.delegate.recordCompletedAsync(sealed, executor))
			.thenApply((found) -> found.map(this::opened));
	}

	@Override
	public boolean joinsCurrentTransaction() {
		return this.delegate.joinsCurrentTransaction();
	}

	@Override
	public boolean joinedTransactionIsEmpty() {
		return this.delegate.joinedTransactionIsEmpty();
	}

	@Override
	public <T extends @Nullable Object> T lastInJoinedTransaction(Supplier<T> completion) {
		return this.delegate.lastInJoinedTransaction(completion);
	}

	@Override
	public Optional<IdempotencyRecord> find(RecordId id) {
		return read(id, () -> this.delegate.find(id)).map(this::opened);
	}

	@Override
	public CompletionStage<Optional<IdempotencyRecord>> findAsync(RecordId id, Executor executor) {
		return readAsync(id, this.delegate.findAsync(id, executor)).thenApply((found) -> found.map(this::opened));
	}

	@Override
	public boolean isBlocking() {
		return this.delegate.isBlocking();
	}

	/**
	 * The records of a key in every scope, their answers opened; one that fails its
	 * integrity check is listed as {@link #inspect} lists it.
	 */
	@Override
	public List<InspectedRecord> inspectByKey(String key, int maxRecords) {
		return this.delegate.inspectByKey(key, maxRecords).stream().map(this::openedForAnOperator).toList();
	}

	/**
	 * The record with its answer opened. A record whose answer fails its integrity check
	 * is returned too, so that an operator sees it and can remove it: with an empty
	 * {@link StoredResponseCodec#isSealed sealed} answer in place of its own.
	 */
	@Override
	public Optional<InspectedRecord> inspect(RecordId id) {
		return read(id, () -> this.delegate.inspect(id)).map(this::openedForAnOperator);
	}

	private InspectedRecord openedForAnOperator(InspectedRecord inspected) {
		IdempotencyRecord record = inspected.record();
		try {
			record = opened(record);
		}
		catch (StoredResponseIntegrityException ex) {
			record = new IdempotencyRecord(record.id(), record.fingerprint(), record.operation(), record.state(),
					record.leaseExpiresAt(), record.expiresAt(), StoredResponseCodec.sealed(new byte[0]));
		}
		return new InspectedRecord(record, inspected.createdAt(), inspected.ownerToken());
	}

	@Override
	public boolean remove(RecordId id) {
		return this.delegate.remove(id);
	}

	@Override
	public int purgeExpired(int maxRecords) {
		return this.delegate.purgeExpired(maxRecords);
	}

	@Override
	public String name() {
		return this.delegate.name();
	}

	private IdempotencyRecord opened(IdempotencyRecord record) {
		if (record.state() != RecordState.COMPLETED) {
			return record;
		}
		StoredResponse stored = record.completedResponse();
		StoredResponse opened = this.sealing.open(record.id(), stored);
		return (opened == stored) ? record : new IdempotencyRecord(record.id(), record.fingerprint(),
				record.operation(), record.state(), record.leaseExpiresAt(), record.expiresAt(), opened);
	}

	/**
	 * A read of the store beneath; an answer it could not decode is reported as an
	 * integrity failure of this record.
	 */
	private static <T> T read(RecordId id, Supplier<T> call) {
		try {
			return call.get();
		}
		catch (RuntimeException ex) {
			StoredResponseIntegrityException integrity = StoredResponseIntegrityException.in(ex);
			if (integrity != null && integrity.recordId() == null) {
				throw new StoredResponseIntegrityException(id, integrity);
			}
			throw ex;
		}
	}

	/**
	 * {@link #read} for a non-blocking call: the same failure, when the stage completes.
	 */
	private static <T> CompletionStage<T> readAsync(RecordId id, CompletionStage<T> call) {
		return call.handle((value, error) -> {
			if (error == null) {
				return value;
			}
			Throwable cause = (error instanceof CompletionException && error.getCause() != null) ? error.getCause()
					: error;
			if (cause instanceof RuntimeException runtime) {
				return read(id, () -> {
					throw runtime;
				});
			}
			throw new CompletionException(cause);
		});
	}

	@Override
	public String toString() {
		return "SealingStore[" + this.delegate + ", " + this.sealing + "]";
	}

}
