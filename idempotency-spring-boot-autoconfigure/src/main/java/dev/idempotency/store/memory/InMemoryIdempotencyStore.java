package dev.idempotency.store.memory;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Iterator;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

import dev.idempotency.store.CompletedRecordRequest;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.IdempotencyStoreException;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.RecordState;
import dev.idempotency.store.ReserveRequest;
import dev.idempotency.store.ReserveResult;
import dev.idempotency.store.StoredResponse;
import dev.idempotency.store.StoredResponseCodec;
import org.jspecify.annotations.Nullable;

/**
 * A store in this JVM's memory, for a single node and for development. Thread-safe: every
 * transition is one atomic {@link ConcurrentHashMap#compute compute} on the record's
 * entry, which also moves the store's entry and byte counts, so both stay exact.
 * <p>
 * Bounded twice: by a number of records ({@code maxEntries}) and by an estimate of the
 * bytes they retain ({@code maxBytes}: the encoded response, the strings of the record,
 * and a fixed 256 bytes per entry for the map node and the objects around them). A
 * reservation or a completion that would pass either bound first drops the expired
 * records; if it still does not fit, it is refused with an
 * {@link IdempotencyStoreException} naming the property to raise. A refused reservation
 * leaves nothing behind (the engine's failure mode answers it); a refused completion
 * deletes its in-progress record, so a retry runs the operation again at once. A live
 * record is never evicted: that would silently allow a second execution.
 */
public class InMemoryIdempotencyStore implements IdempotencyStore {

	/**
	 * Bytes counted per entry besides its strings and response: map node, record,
	 * instants.
	 */
	static final int ENTRY_OVERHEAD_BYTES = 256;

	private final ConcurrentHashMap<RecordId, Entry> entries = new ConcurrentHashMap<>();

	private final AtomicInteger size = new AtomicInteger();

	private final AtomicLong bytes = new AtomicLong();

	private final Clock clock;

	private final int maxEntries;

	private final long maxBytes;

	/** A store bounded by {@code maxEntries} and by {@link #defaultMaxBytes()}. */
	public InMemoryIdempotencyStore(Clock clock, int maxEntries) {
		this(clock, maxEntries, defaultMaxBytes());
	}

	public InMemoryIdempotencyStore(Clock clock, int maxEntries, long maxBytes) {
		if (maxEntries < 1) {
			throw new IllegalArgumentException("idempotency.store.memory.max-entries must be at least 1");
		}
		if (maxBytes < 1) {
			throw new IllegalArgumentException("idempotency.store.memory.max-bytes must be positive");
		}
		this.clock = clock;
		this.maxEntries = maxEntries;
		this.maxBytes = maxBytes;
	}

	/** The byte bound used when none is configured: 1/16 of the JVM's maximum heap. */
	public static long defaultMaxBytes() {
		return Runtime.getRuntime().maxMemory() / 16;
	}

	@Override
	public ReserveResult reserve(ReserveRequest request) {
		try {
			return withExpiredDroppedWhenFull(() -> tryReserve(request));
		}
		catch (StoreFullException stillFull) {
			throw new IdempotencyStoreException("in-memory idempotency store is full (" + stillFull.getMessage()
					+ "); new key refused, live records are never evicted");
		}
	}

	@Override
	public boolean complete(RecordId id, String ownerToken, StoredResponse response) {
		byte[] encoded = StoredResponseCodec.encode(response);
		try {
			return withExpiredDroppedWhenFull(
					() -> transition(id, ownerToken, (current) -> new Entry(current.fingerprint, current.operation,
							null, null, current.expiresAt, encoded)));
		}
		catch (StoreFullException stillFull) {
			// Not stored: free the key so that a retry runs again instead of waiting
			// out the lease.
			transition(id, ownerToken, (current) -> null);
			throw new IdempotencyStoreException("in-memory idempotency store is full (" + stillFull.getMessage()
					+ "); the response of " + encoded.length + " bytes was not stored and the key was released");
		}
	}

	@Override
	public Optional<IdempotencyRecord> recordCompleted(CompletedRecordRequest request) {
		byte[] encoded = StoredResponseCodec.encode(request.response());
		try {
			return withExpiredDroppedWhenFull(() -> tryRecordCompleted(request, encoded));
		}
		catch (StoreFullException stillFull) {
			throw new IdempotencyStoreException("in-memory idempotency store is full (" + stillFull.getMessage()
					+ "); the response of " + encoded.length + " bytes was not recorded");
		}
	}

	private Optional<IdempotencyRecord> tryRecordCompleted(CompletedRecordRequest request, byte[] encoded) {
		Instant now = this.clock.instant();
		IdempotencyRecord[] existing = new IdempotencyRecord[1];
		this.entries.compute(request.id(), (id, current) -> {
			if (current == null || current.isExpired(now)) {
				Entry next = new Entry(request.fingerprint(), request.operation(), null, null,
						now.plus(request.retention()), encoded);
				account(id, current, next);
				return next;
			}
			existing[0] = current.toRecord(id);
			return current;
		});
		return Optional.ofNullable(existing[0]);
	}

	/**
	 * Runs {@code change}; if the store is full, drops the expired records and runs it
	 * once more.
	 * @throws StoreFullException if it is still full
	 */
	private <T> T withExpiredDroppedWhenFull(Supplier<T> change) {
		try {
			return change.get();
		}
		catch (StoreFullException ex) {
			purgeExpired(Integer.MAX_VALUE);
			return change.get();
		}
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

	/** The estimated bytes the held records retain, counted as described on the class. */
	public long retainedBytes() {
		return this.bytes.get();
	}

	/** The bound on the number of records this store was created with. */
	public int maxEntries() {
		return this.maxEntries;
	}

	/** The bound on {@link #retainedBytes()} this store was created with. */
	public long maxBytes() {
		return this.maxBytes;
	}

	/**
	 * Sum of the entries' weights, walked now; equals {@link #retainedBytes()} when
	 * nothing runs.
	 */
	long recountBytes() {
		long total = 0;
		for (Map.Entry<RecordId, Entry> entry : this.entries.entrySet()) {
			total += entry.getValue().weight(entry.getKey());
		}
		return total;
	}

	int recountEntries() {
		return this.entries.size();
	}

	private ReserveResult tryReserve(ReserveRequest request) {
		Instant now = this.clock.instant();
		ReserveResult[] result = new ReserveResult[1];
		this.entries.compute(request.id(), (id, current) -> {
			if (current == null || current.isExpired(now)) {
				Entry next = new Entry(request.fingerprint(), request.operation(), request.ownerToken(),
						now.plus(request.lease()), now.plus(request.retention()), null);
				account(id, current, next);
				result[0] = new ReserveResult.Acquired(false);
				return next;
			}
			if (current.encodedResponse == null && !now.isBefore(current.leaseExpiresAt)
					&& current.fingerprint.equals(request.fingerprint())) {
				Entry next = new Entry(current.fingerprint, current.operation, request.ownerToken(),
						now.plus(request.lease()), current.expiresAt, null);
				account(id, current, next);
				result[0] = new ReserveResult.Acquired(true);
				return next;
			}
			result[0] = new ReserveResult.Existing(current.toRecord(id));
			return current;
		});
		return result[0];
	}

	/**
	 * Applies {@code change} if the in-progress record is owned by {@code ownerToken}.
	 */
	private boolean transition(RecordId id, String ownerToken, UnaryOperator<Entry> change) {
		Instant now = this.clock.instant();
		boolean[] changed = new boolean[1];
		this.entries.computeIfPresent(id, (key, current) -> {
			if (current.isExpired(now) || current.encodedResponse != null || !ownerToken.equals(current.ownerToken)) {
				return current;
			}
			Entry next = change.apply(current);
			account(key, current, next);
			changed[0] = true;
			return next;
		});
		return changed[0];
	}

	private boolean removeIfExpired(RecordId id, Instant now) {
		boolean[] removed = new boolean[1];
		this.entries.computeIfPresent(id, (key, current) -> {
			if (current.isExpired(now)) {
				account(key, current, null);
				removed[0] = true;
				return null;
			}
			return current;
		});
		return removed[0];
	}

	/**
	 * Moves the counts from {@code current} to {@code next} (either may be null), inside
	 * the compute that makes that change. Growth past a bound throws
	 * {@link StoreFullException} with the counts unchanged, which leaves the map
	 * unchanged too. Compare-and-set, not add-then-undo, so that no reader ever sees a
	 * count past its bound.
	 */
	private void account(RecordId id, @Nullable Entry current, @Nullable Entry next) {
		int entriesDelta = ((next != null) ? 1 : 0) - ((current != null) ? 1 : 0);
		long bytesDelta = ((next != null) ? next.weight(id) : 0) - ((current != null) ? current.weight(id) : 0);
		if (entriesDelta > 0) {
			int held;
			do {
				held = this.size.get();
				if (held + entriesDelta > this.maxEntries) {
					throw new StoreFullException(
							held + " records, idempotency.store.memory.max-entries=" + this.maxEntries);
				}
			}
			while (!this.size.compareAndSet(held, held + entriesDelta));
		}
		long retained;
		do {
			retained = this.bytes.get();
			if (bytesDelta > 0 && retained + bytesDelta > this.maxBytes) {
				if (entriesDelta > 0) {
					this.size.addAndGet(-entriesDelta);
				}
				throw new StoreFullException(retained + " of " + this.maxBytes + " bytes retained, " + bytesDelta
						+ " more needed; idempotency.store.memory.max-bytes=" + this.maxBytes);
			}
		}
		while (!this.bytes.compareAndSet(retained, retained + bytesDelta));
		if (entriesDelta < 0) {
			this.size.addAndGet(entriesDelta);
		}
	}

	/** A bound would be passed; thrown inside a compute, so the map stays unchanged. */
	private static final class StoreFullException extends RuntimeException {

		StoreFullException(String message) {
			super(message, null, false, false);
		}

	}

	private record Entry(String fingerprint, String operation, @Nullable String ownerToken,
			@Nullable Instant leaseExpiresAt, Instant expiresAt, byte @Nullable [] encodedResponse) {

		boolean isExpired(Instant now) {
			return !now.isBefore(this.expiresAt);
		}

		/**
		 * Estimated bytes retained: two bytes per character, the response, a fixed
		 * overhead.
		 */
		long weight(RecordId id) {
			long characters = id.scope().length() + id.key().length() + this.fingerprint.length()
					+ this.operation.length() + ((this.ownerToken != null) ? this.ownerToken.length() : 0);
			return ENTRY_OVERHEAD_BYTES + 2 * characters
					+ ((this.encodedResponse != null) ? this.encodedResponse.length : 0);
		}

		IdempotencyRecord toRecord(RecordId id) {
			boolean completed = this.encodedResponse != null;
			return new IdempotencyRecord(id, this.fingerprint, this.operation,
					completed ? RecordState.COMPLETED : RecordState.IN_PROGRESS, this.leaseExpiresAt, this.expiresAt,
					completed ? StoredResponseCodec.decode(this.encodedResponse) : null);
		}

	}

}
