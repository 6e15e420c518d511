package dev.idempotency.store.memory;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Iterator;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.IdempotencyStoreException;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.RecordState;
import dev.idempotency.store.ReserveRequest;
import dev.idempotency.store.ReserveResult;
import dev.idempotency.store.StoredResponse;
import dev.idempotency.store.StoredResponseCodec;

/**
 * A store in this JVM's memory, for a single node and for development. Thread-safe: every
 * transition is one atomic {@link ConcurrentHashMap#compute compute} on the record's entry.
 * Bounded: when {@code maxEntries} live records are held, expired ones are dropped, and if none
 * can be dropped a new reservation fails (the engine's store-failure policy answers it) rather
 * than evicting a live record, which would silently allow a second execution.
 */
public class InMemoryIdempotencyStore implements IdempotencyStore {

	private final ConcurrentHashMap<RecordId, Entry> entries = new ConcurrentHashMap<>();

	private final AtomicInteger size = new AtomicInteger();

	private final Clock clock;

	private final int maxEntries;

	public InMemoryIdempotencyStore(Clock clock, int maxEntries) {
		if (maxEntries < 1) {
			throw new IllegalArgumentException("maxEntries must be at least 1");
		}
		this.clock = clock;
		this.maxEntries = maxEntries;
	}

	@Override
	public ReserveResult reserve(ReserveRequest request) {
		Instant now = this.clock.instant();
		if (this.size.get() >= this.maxEntries) {
			purgeExpired(Integer.MAX_VALUE);
		}
		ReserveResult[] result = new ReserveResult[1];
		this.entries.compute(request.id(), (id, current) -> {
			if (current == null || current.isExpired(now)) {
				if (current == null) {
					claimCapacity();
				}
				result[0] = new ReserveResult.Acquired(false);
				return new Entry(request.fingerprint(), request.operation(), request.ownerToken(),
						now.plus(request.lease()), now.plus(request.retention()), null);
			}
			if (current.encodedResponse == null && !now.isBefore(current.leaseExpiresAt)
					&& current.fingerprint.equals(request.fingerprint())) {
				result[0] = new ReserveResult.Acquired(true);
				return new Entry(current.fingerprint, current.operation, request.ownerToken(),
						now.plus(request.lease()), current.expiresAt, null);
			}
			result[0] = new ReserveResult.Existing(current.toRecord(id));
			return current;
		});
		return result[0];
	}

	@Override
	public boolean complete(RecordId id, String ownerToken, StoredResponse response) {
		byte[] encoded = StoredResponseCodec.encode(response);
		return transition(id, ownerToken,
				(current) -> new Entry(current.fingerprint, current.operation, null, null, current.expiresAt, encoded));
	}

	@Override
	public boolean release(RecordId id, String ownerToken) {
		return transition(id, ownerToken, (current) -> null);
	}

	@Override
	public boolean heartbeat(RecordId id, String ownerToken, Duration lease) {
		Instant leaseExpiresAt = this.clock.instant().plus(lease);
		return transition(id, ownerToken, (current) -> new Entry(current.fingerprint, current.operation, ownerToken,
				leaseExpiresAt, current.expiresAt, null));
	}

	@Override
	public Optional<IdempotencyRecord> find(RecordId id) {
		Entry entry = this.entries.get(id);
		if (entry == null || entry.isExpired(this.clock.instant())) {
			return Optional.empty();
		}
		return Optional.of(entry.toRecord(id));
	}

	@Override
	public int purgeExpired(int maxRecords) {
		Instant now = this.clock.instant();
		int removed = 0;
		for (Iterator<Map.Entry<RecordId, Entry>> it = this.entries.entrySet().iterator(); it.hasNext()
				&& removed < maxRecords;) {
			Map.Entry<RecordId, Entry> candidate = it.next();
			if (candidate.getValue().isExpired(now) && removeIfExpired(candidate.getKey(), now)) {
				removed++;
			}
		}
		return removed;
	}

	@Override
	public String name() {
		return "memory";
	}

	/** How many records the store holds now, expired ones not yet dropped included. */
	public int size() {
		return this.size.get();
	}

	/** The bound this store was created with. */
	public int maxEntries() {
		return this.maxEntries;
	}

	/** Applies {@code change} if the in-progress record is owned by {@code ownerToken}. */
	private boolean transition(RecordId id, String ownerToken, java.util.function.UnaryOperator<Entry> change) {
		Instant now = this.clock.instant();
		boolean[] changed = new boolean[1];
		this.entries.computeIfPresent(id, (key, current) -> {
			if (current.isExpired(now) || current.encodedResponse != null
					|| !ownerToken.equals(current.ownerToken)) {
				return current;
			}
			changed[0] = true;
			Entry next = change.apply(current);
			if (next == null) {
				this.size.decrementAndGet();
			}
			return next;
		});
		return changed[0];
	}

	/** Called inside the compute of a new key; throwing leaves the map unchanged. */
	private void claimCapacity() {
		if (this.size.incrementAndGet() > this.maxEntries) {
			this.size.decrementAndGet();
			throw new IdempotencyStoreException("in-memory idempotency store is full (" + this.maxEntries
					+ " live records); raise idempotency.store.memory.max-entries or use a shared store");
		}
	}

	private boolean removeIfExpired(RecordId id, Instant now) {
		boolean[] removed = new boolean[1];
		this.entries.computeIfPresent(id, (key, current) -> {
			if (current.isExpired(now)) {
				removed[0] = true;
				this.size.decrementAndGet();
				return null;
			}
			return current;
		});
		return removed[0];
	}

	private record Entry(String fingerprint, String operation, String ownerToken, Instant leaseExpiresAt,
			Instant expiresAt, byte[] encodedResponse) {

		boolean isExpired(Instant now) {
			return !now.isBefore(this.expiresAt);
		}

		IdempotencyRecord toRecord(RecordId id) {
			boolean completed = this.encodedResponse != null;
			return new IdempotencyRecord(id, this.fingerprint, this.operation,
					completed ? RecordState.COMPLETED : RecordState.IN_PROGRESS, this.leaseExpiresAt, this.expiresAt,
					completed ? StoredResponseCodec.decode(this.encodedResponse) : null);
		}

	}

}
