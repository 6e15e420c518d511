package dev.idempotency.store.memory;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.function.Supplier;

import dev.idempotency.store.CompletedRecordRequest;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.IdempotencyStoreException;
import dev.idempotency.store.IdempotencyStoreFullException;
import dev.idempotency.store.InspectedRecord;
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
 * entry, which also moves the store's entry and byte counts, the scope's counts and the
 * expiry index, so all of them stay exact.
 * <p>
 * Bounded twice: by a number of records ({@code maxEntries}) and by an estimate of the
 * bytes they retain ({@code maxBytes}: the encoded response, the strings of the record,
 * and a fixed 256 bytes per entry for the map node and the objects around them).
 * <p>
 * A reservation or a completion that would pass a bound first drops the expired records:
 * they are found oldest first in an index ordered by expiry, so dropping costs what
 * expired, and finding that nothing did costs one look at the index. What happens when it
 * still does not fit is chosen by {@link OnFull}:
 * <ul>
 * <li>{@link OnFull#EVICT} evicts completed records, the one closest to its expiry first,
 * until it fits. A live (in-progress) record is never evicted: that would allow a second
 * execution while the first runs. A retry of an evicted key is a new key again: it runs,
 * and a different body is no longer refused. {@link #evictions()} counts them and
 * {@link #oldestRecordAge()} shows the retention in effect. Only a store full of live
 * records refuses.
 * <li>{@link OnFull#REFUSE} refuses with an {@link IdempotencyStoreFullException} naming
 * the property to raise and how long until the oldest record that could make room
 * expires: every key keeps its whole retention, at the price of a 503 under load.
 * </ul>
 * A refused reservation leaves nothing behind (the engine's failure mode answers it); a
 * refused completion deletes its in-progress record, so a retry runs the operation again
 * at once.
 * <p>
 * One scope (a principal) may hold at most {@code maxSharePerScope} of each bound, so
 * that one principal cannot take the store from all. With {@link OnFull#REFUSE} the share
 * is a cap: past it the scope's new keys are refused. With {@link OnFull#EVICT} it bites
 * only when scopes compete for a full store: a scope past its share makes room by
 * evicting its own completed records, never another's, and a scope within its share
 * evicts first from the scopes past theirs. A store with one scope therefore uses all of
 * it.
 * <p>
 * A record expires at the end of its retention, as in every store; heartbeats extend its
 * lease, not its retention, so they leave its place in the index unchanged.
 *
 * @since 0.1.0
 */
public class InMemoryIdempotencyStore implements IdempotencyStore {

	/**
	 * Bytes counted per entry besides its strings and response: map node, record,
	 * instants, its place in the expiry index.
	 */
	static final int ENTRY_OVERHEAD_BYTES = 256;

	/**
	 * Most index elements one eviction looks at for a completed record it may take before
	 * the request that needs room is refused.
	 */
	static final int MAX_EVICTION_VISITS = 4_096;

	/**
	 * Attempts to fit one change, each after making the room it lacked (other threads may
	 * take it first); past them the change is refused.
	 */
	private static final int MAX_FIT_ATTEMPTS = 100;

	/**
	 * Retry-After of a refusal by a store full of live records: they end within their
	 * lease, not at their expiry.
	 */
	private static final Duration LIVE_RECORDS_RETRY_AFTER = Duration.ofSeconds(1);

	/**
	 * What a reservation or completion that does not fit gets once expired records are
	 * dropped.
	 */
	public enum OnFull {

		/**
		 * Completed records are evicted, the one closest to its expiry first; only a
		 * store full of live records refuses.
		 */
		EVICT,

		/** The request is refused; every record keeps its whole retention. */
		REFUSE

	}

	private final ConcurrentHashMap<RecordId, Entry> entries = new ConcurrentHashMap<>();

	/**
	 * One element per entry, oldest expiry first. Changed only inside the compute that
	 * changes the entry, so under the entry's lock the two agree.
	 */
	private final ConcurrentSkipListMap<Expiry, RecordId> byExpiry = new ConcurrentSkipListMap<>();

	private final AtomicLong tickets = new AtomicLong();

	/**
	 * What each scope holds, changed inside its own compute (nested in the entry's);
	 * {@code null} when a scope may fill the whole store.
	 */
	private final @Nullable ConcurrentHashMap<String, ScopeUsage> scopes;

	private final AtomicInteger size = new AtomicInteger();

	/** Scopes that hold more than their share now; changed inside their compute. */
	private final AtomicInteger scopesPastShare = new AtomicInteger();

	private final AtomicLong bytes = new AtomicLong();

	private final LongAdder purgeVisits = new LongAdder();

	private final LongAdder evictions = new LongAdder();

	private final Clock clock;

	private final int maxEntries;

	private final long maxBytes;

	private final double maxSharePerScope;

	private final int maxEntriesPerScope;

	private final long maxBytesPerScope;

	private final OnFull onFull;

	/**
	 * A store bounded by {@code maxEntries} and by {@link #defaultMaxBytes()}, which one
	 * scope may fill.
	 */
	public InMemoryIdempotencyStore(Clock clock, int maxEntries) {
		this(clock, maxEntries, defaultMaxBytes());
	}

	/**
	 * A store bounded by {@code maxEntries} and {@code maxBytes}, which one scope may
	 * fill.
	 */
	public InMemoryIdempotencyStore(Clock clock, int maxEntries, long maxBytes) {
		this(clock, maxEntries, maxBytes, 1.0);
	}

	/**
	 * A store bounded by {@code maxEntries} and {@code maxBytes}, of which one scope may
	 * hold at most {@code maxSharePerScope} (each bound times the share, rounded down, at
	 * least one record and one byte).
	 * @param maxSharePerScope more than 0, at most 1 (1: no share)
	 */
	public InMemoryIdempotencyStore(Clock clock, int maxEntries, long maxBytes, double maxSharePerScope) {
		this(clock, maxEntries, maxBytes, maxSharePerScope, OnFull.REFUSE);
	}

	/**
	 * A store bounded by {@code maxEntries} and {@code maxBytes}, of which one scope may
	 * hold at most {@code maxSharePerScope}, that makes room as {@code onFull} says (the
	 * auto-configuration's default is {@link OnFull#EVICT}; the other constructors keep
	 * {@link OnFull#REFUSE}).
	 * @param maxSharePerScope more than 0, at most 1 (1: no share)
	 * @since 0.2.0
	 */
	public InMemoryIdempotencyStore(Clock clock, int maxEntries, long maxBytes, double maxSharePerScope,
			OnFull onFull) {
		if (maxEntries < 1) {
			throw new IllegalArgumentException("idempotency.store.memory.max-entries must be at least 1");
		}
		if (maxBytes < 1) {
			throw new IllegalArgumentException("idempotency.store.memory.max-bytes must be positive");
		}
		if (!(maxSharePerScope > 0 && maxSharePerScope <= 1)) {
			throw new IllegalArgumentException(
					"idempotency.store.memory.max-share-per-scope must be more than 0 and at most 1, was "
							+ maxSharePerScope);
		}
		this.clock = clock;
		this.maxEntries = maxEntries;
		this.maxBytes = maxBytes;
		this.maxSharePerScope = maxSharePerScope;
		this.maxEntriesPerScope = (int) Math.max(1, Math.floor(maxEntries * maxSharePerScope));
		this.maxBytesPerScope = (long) Math.max(1, Math.floor(maxBytes * maxSharePerScope));
		this.scopes = (maxSharePerScope < 1) ? new ConcurrentHashMap<>() : null;
		this.onFull = onFull;
	}

	/** The byte bound used when none is configured: 1/16 of the JVM's maximum heap. */
	public static long defaultMaxBytes() {
		return Runtime.getRuntime().maxMemory() / 16;
	}

	@Override
	public ReserveResult reserve(ReserveRequest request) {
		try {
			return withRoomMade(request.id().scope(), () -> tryReserve(request));
		}
		catch (StoreFullException stillFull) {
			throw stillFull.refusal("new key refused, live records are never evicted", this.clock.instant());
		}
	}

	@Override
	public boolean complete(RecordId id, String ownerToken, StoredResponse response) {
		byte[] encoded = StoredResponseCodec.encode(response);
		try {
			return withRoomMade(id.scope(), () -> transition(id, ownerToken, (current) -> new Entry(current.fingerprint,
					current.operation, null, null, current.expiry, encoded)));
		}
		catch (StoreFullException stillFull) {
			// Not stored: free the key so that a retry runs again instead of waiting
			// out the lease.
			transition(id, ownerToken, (current) -> null);
			throw stillFull.refusal(
					"the response of " + encoded.length + " bytes was not stored and the key was released",
					this.clock.instant());
		}
	}

	@Override
	public Optional<IdempotencyRecord> recordCompleted(CompletedRecordRequest request) {
		byte[] encoded = StoredResponseCodec.encode(request.response());
		try {
			return withRoomMade(request.id().scope(), () -> tryRecordCompleted(request, encoded));
		}
		catch (StoreFullException stillFull) {
			throw stillFull.refusal("the response of " + encoded.length + " bytes was not recorded",
					this.clock.instant());
		}
	}

	private Optional<IdempotencyRecord> tryRecordCompleted(CompletedRecordRequest request, byte[] encoded) {
		Instant now = this.clock.instant();
		IdempotencyRecord[] existing = new IdempotencyRecord[1];
		this.entries.compute(request.id(), (id, current) -> {
			if (current == null || current.isExpired(now)) {
				Entry next = new Entry(request.fingerprint(), request.operation(), null, null,
						newExpiry(now, request.retention()), encoded);
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
	 * once more; if it is still full and the store evicts, evicts completed records for
	 * the room it lacks and runs it again, a few times at most (others may take the room
	 * made).
	 * @throws StoreFullException if it is still full
	 */
	private <T> T withRoomMade(String scope, Supplier<T> change) {
		try {
			return change.get();
		}
		catch (StoreFullException ex) {
			purgeExpired(Integer.MAX_VALUE);
		}
		for (int attempt = 1;; attempt++) {
			try {
				return change.get();
			}
			catch (StoreFullException full) {
				if (this.onFull == OnFull.REFUSE || !full.evictionCanHelp || attempt == MAX_FIT_ATTEMPTS
						|| !evictFor(scope, full.entriesShort, full.bytesShort)) {
					throw (this.onFull == OnFull.EVICT && full.evictionCanHelp)
							? full.ofLiveRecords(this.clock.instant().plus(LIVE_RECORDS_RETRY_AFTER)) : full;
				}
			}
		}
	}

	/**
	 * Evicts completed records until {@code entries} records and {@code bytes} bytes are
	 * free: from {@code scope} alone when it is past its share, else first from the
	 * scopes past theirs.
	 * @return whether that room was made
	 */
	private boolean evictFor(String scope, int entries, long bytes) {
		boolean ownOnly = isPastShare(scope, 1, 0);
		int freedEntries = 0;
		long freedBytes = 0;
		while (freedEntries < entries || freedBytes < bytes) {
			long freed = evictOne(scope, ownOnly);
			if (freed < 0) {
				return false;
			}
			freedEntries++;
			freedBytes += freed;
		}
		return true;
	}

	/**
	 * Evicts the completed record closest to its expiry that {@code scope} may take: of
	 * {@code scope} alone if {@code ownOnly}; else of a scope past its share if there is
	 * one, else of any scope. A candidate that another thread removed or completed
	 * meanwhile is passed over for the next.
	 * @return the weight it freed, or -1 if none was found
	 */
	private long evictOne(String scope, boolean ownOnly) {
		if (ownOnly) {
			return evictFirst((id) -> id.scope().equals(scope));
		}
		if (this.scopes != null && this.scopesPastShare.get() > 0) {
			long freed = evictFirst((id) -> isPastShare(id.scope(), 0, 0));
			if (freed >= 0) {
				return freed;
			}
		}
		return evictFirst((id) -> true);
	}

	/**
	 * Evicts the first completed record in the index whose id {@code may} take, looking
	 * at {@link #MAX_EVICTION_VISITS} elements at most.
	 * @return the weight it freed, or -1 if none was found
	 */
	private long evictFirst(Predicate<RecordId> may) {
		int visited = 0;
		for (Map.Entry<Expiry, RecordId> candidate : this.byExpiry.entrySet()) {
			if (++visited > MAX_EVICTION_VISITS) {
				break;
			}
			RecordId id = candidate.getValue();
			if (!may.test(id)) {
				continue;
			}
			Entry entry = this.entries.get(id);
			if (entry == null || entry.encodedResponse == null || !entry.expiry.equals(candidate.getKey())) {
				continue;
			}
			long freed = evict(candidate);
			if (freed >= 0) {
				return freed;
			}
		}
		return -1;
	}

	private long evict(Map.Entry<Expiry, RecordId> candidate) {
		long freed = removeIfCompleted(candidate.getValue(), candidate.getKey());
		if (freed >= 0) {
			this.evictions.increment();
		}
		return freed;
	}

	/**
	 * Whether {@code scope} holds more than its share once it grows by {@code entries}
	 * and {@code bytes}; never when there is no share. Read outside the scope's compute:
	 * a hint for choosing what to evict, not a bound.
	 */
	private boolean isPastShare(String scope, int entries, long bytes) {
		ConcurrentHashMap<String, ScopeUsage> counts = this.scopes;
		ScopeUsage usage = (counts != null) ? counts.get(scope) : null;
		return usage != null
				&& (usage.entries + entries > this.maxEntriesPerScope || usage.bytes + bytes > this.maxBytesPerScope);
	}

	/**
	 * Removes the entry of {@code id} if it is still the completed record of
	 * {@code expiry}.
	 * @return the weight freed, or -1 if it was not
	 */
	private long removeIfCompleted(RecordId id, Expiry expiry) {
		long[] freed = { -1 };
		this.entries.computeIfPresent(id, (key, current) -> {
			if (current.encodedResponse == null || !current.expiry.equals(expiry)) {
				return current;
			}
			freed[0] = current.weight(key);
			account(key, current, null);
			return null;
		});
		return freed[0];
	}

	@Override
	public boolean release(RecordId id, String ownerToken) {
		return transition(id, ownerToken, (current) -> null);
	}

	@Override
	public boolean heartbeat(RecordId id, String ownerToken, Duration lease) {
		Instant leaseExpiresAt = this.clock.instant().plus(lease);
		return transition(id, ownerToken, (current) -> new Entry(current.fingerprint, current.operation, ownerToken,
				leaseExpiresAt, current.expiry, null));
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
	public Optional<InspectedRecord> inspect(RecordId id) {
		Entry entry = this.entries.get(id);
		if (entry == null || entry.isExpired(this.clock.instant())) {
			return Optional.empty();
		}
		return Optional.of(new InspectedRecord(entry.toRecord(id), entry.expiry.created(), entry.ownerToken));
	}

	@Override
	public boolean remove(RecordId id) {
		Instant now = this.clock.instant();
		boolean[] removed = new boolean[1];
		this.entries.computeIfPresent(id, (key, current) -> {
			// An expired entry is left to the purge, which also moves its counts.
			if (current.isExpired(now)) {
				return current;
			}
			account(key, current, null);
			removed[0] = true;
			return null;
		});
		return removed[0];
	}

	/**
	 * Drops up to {@code maxRecords} expired records, oldest first: visits the expired
	 * records only, and stops at the first that has not expired.
	 */
	@Override
	public int purgeExpired(int maxRecords) {
		Instant now = this.clock.instant();
		int removed = 0;
		while (removed < maxRecords) {
			Map.Entry<Expiry, RecordId> oldest = this.byExpiry.firstEntry();
			if (oldest == null || now.isBefore(oldest.getKey().at())) {
				break;
			}
			this.purgeVisits.increment();
			if (removeIfExpired(oldest.getValue(), oldest.getKey())) {
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

	/** The most of each bound one scope may hold (1: the whole store). */
	public double maxSharePerScope() {
		return this.maxSharePerScope;
	}

	/**
	 * What a change that does not fit gets once expired records are dropped.
	 * @since 0.2.0
	 */
	public OnFull onFull() {
		return this.onFull;
	}

	/**
	 * Completed records evicted to make room since the store was created.
	 * @since 0.2.0
	 */
	public long evictions() {
		return this.evictions.sum();
	}

	/**
	 * How long ago the record next in line to go (expired, or evicted first) was made:
	 * while records are evicted, the retention a key actually gets; {@link Duration#ZERO}
	 * for an empty store.
	 * @since 0.2.0
	 */
	public Duration oldestRecordAge() {
		Map.Entry<Expiry, RecordId> oldest = this.byExpiry.firstEntry();
		if (oldest == null) {
			return Duration.ZERO;
		}
		Duration age = Duration.between(oldest.getKey().created(), this.clock.instant());
		return age.isNegative() ? Duration.ZERO : age;
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

	long recountEntries(String scope) {
		return this.entries.keySet().stream().filter((id) -> id.scope().equals(scope)).count();
	}

	long recountBytes(String scope) {
		long total = 0;
		for (Map.Entry<RecordId, Entry> entry : this.entries.entrySet()) {
			if (entry.getKey().scope().equals(scope)) {
				total += entry.getValue().weight(entry.getKey());
			}
		}
		return total;
	}

	/** Elements of the expiry index; equals {@link #size()} when nothing runs. */
	int indexedExpiries() {
		return this.byExpiry.size();
	}

	/** Records the purge has looked at since the store was created. */
	long recordsVisitedByPurge() {
		return this.purgeVisits.sum();
	}

	/**
	 * Records, bytes and indexed expiries (only with {@link OnFull#REFUSE}) counted for
	 * {@code scope}: zeros for none, or no share.
	 */
	long[] scopeUsage(String scope) {
		ScopeUsage usage = (this.scopes != null) ? this.scopes.get(scope) : null;
		return (usage != null) ? new long[] { usage.entries, usage.bytes, usage.expiries.size() }
				: new long[] { 0, 0, 0 };
	}

	/** Scopes with a usage counted; none once the store is empty. */
	int countedScopes() {
		return (this.scopes != null) ? this.scopes.size() : 0;
	}

	int maxEntriesPerScope() {
		return this.maxEntriesPerScope;
	}

	long maxBytesPerScope() {
		return this.maxBytesPerScope;
	}

	private ReserveResult tryReserve(ReserveRequest request) {
		Instant now = this.clock.instant();
		ReserveResult[] result = new ReserveResult[1];
		this.entries.compute(request.id(), (id, current) -> {
			if (current == null || current.isExpired(now)) {
				Entry next = new Entry(request.fingerprint(), request.operation(), request.ownerToken(),
						now.plus(request.lease()), newExpiry(now, request.retention()), null);
				account(id, current, next);
				result[0] = new ReserveResult.Acquired(false);
				return next;
			}
			if (current.encodedResponse == null && !now.isBefore(current.leaseExpiresAt)
					&& current.fingerprint.equals(request.fingerprint())) {
				Entry next = new Entry(current.fingerprint, current.operation, request.ownerToken(),
						now.plus(request.lease()), current.expiry, null);
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
	private boolean transition(RecordId id, String ownerToken, Function<Entry, @Nullable Entry> change) {
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

	/**
	 * Removes the entry of {@code id} if {@code expiry} is still its expiry (then it has
	 * expired: the caller found it due in the index). Under the entry's lock the index
	 * agrees with the map, so an element naming another expiry is already gone; it is
	 * removed regardless, so that a purge always moves on.
	 */
	private boolean removeIfExpired(RecordId id, Expiry expiry) {
		boolean[] removed = new boolean[1];
		this.entries.compute(id, (key, current) -> {
			if (current != null && current.expiry.equals(expiry)) {
				account(key, current, null);
				removed[0] = true;
				return null;
			}
			this.byExpiry.remove(expiry, id);
			return current;
		});
		return removed[0];
	}

	private Expiry newExpiry(Instant now, Duration retention) {
		return new Expiry(now.plus(retention), this.tickets.incrementAndGet(), now);
	}

	/**
	 * Moves the counts from {@code current} to {@code next} (either may be null), and
	 * their places in the expiry indexes, inside the compute that makes that change.
	 * Growth past a bound throws {@link StoreFullException} with the counts and indexes
	 * unchanged, which leaves the map unchanged too. Compare-and-set, not add-then-undo,
	 * so that no reader ever sees a count past its bound.
	 */
	private void account(RecordId id, @Nullable Entry current, @Nullable Entry next) {
		int entriesDelta = ((next != null) ? 1 : 0) - ((current != null) ? 1 : 0);
		long bytesDelta = ((next != null) ? next.weight(id) : 0) - ((current != null) ? current.weight(id) : 0);
		countInStore(entriesDelta, bytesDelta);
		if (this.scopes != null) {
			// Counted in the store first: a scope refused undoes that count, which
			// never passed its bound.
			try {
				countInScope(id.scope(), current, next, entriesDelta, bytesDelta);
			}
			catch (StoreFullException scopeFull) {
				this.bytes.addAndGet(-bytesDelta);
				this.size.addAndGet(-entriesDelta);
				throw scopeFull;
			}
		}
		Expiry leaving = (current != null) ? current.expiry : null;
		Expiry coming = (next != null) ? next.expiry : null;
		if (leaving != null && leaving != coming) {
			this.byExpiry.remove(leaving);
		}
		if (coming != null && coming != leaving) {
			this.byExpiry.put(coming, id);
		}
	}

	private void countInStore(int entriesDelta, long bytesDelta) {
		if (entriesDelta > 0) {
			int held;
			do {
				held = this.size.get();
				if (held + entriesDelta > this.maxEntries) {
					throw new StoreFullException(
							held + " records, idempotency.store.memory.max-entries=" + this.maxEntries, oldestExpiry(),
							held + entriesDelta - this.maxEntries, 0, true);
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
				throw new StoreFullException(
						retained + " of " + this.maxBytes + " bytes retained, " + bytesDelta
								+ " more needed; idempotency.store.memory.max-bytes=" + this.maxBytes,
						(bytesDelta <= this.maxBytes) ? oldestExpiry() : null, 0, retained + bytesDelta - this.maxBytes,
						bytesDelta <= this.maxBytes);
			}
		}
		while (!this.bytes.compareAndSet(retained, retained + bytesDelta));
		if (entriesDelta < 0) {
			this.size.addAndGet(entriesDelta);
		}
	}

	private @Nullable Instant oldestExpiry() {
		Map.Entry<Expiry, RecordId> oldest = this.byExpiry.firstEntry();
		return (oldest != null) ? oldest.getKey().at() : null;
	}

	private void countInScope(String scope, @Nullable Entry current, @Nullable Entry next, int entriesDelta,
			long bytesDelta) {
		ConcurrentHashMap<String, ScopeUsage> counts = this.scopes;
		if (counts == null) {
			return;
		}
		boolean capped = this.onFull == OnFull.REFUSE;
		counts.compute(scope, (name, counted) -> {
			ScopeUsage usage = (counted != null) ? counted : new ScopeUsage();
			if (capped && entriesDelta > 0 && usage.entries + entriesDelta > this.maxEntriesPerScope) {
				throw new StoreFullException("this scope holds " + usage.entries + " records, its share"
						+ " idempotency.store.memory.max-share-per-scope=" + this.maxSharePerScope + " of max-entries="
						+ this.maxEntries, usage.oldestExpiry(), 0, 0, false);
			}
			if (capped && bytesDelta > 0 && usage.bytes + bytesDelta > this.maxBytesPerScope) {
				throw new StoreFullException("this scope retains " + usage.bytes + " bytes, " + bytesDelta
						+ " more needed, its share idempotency.store.memory.max-share-per-scope="
						+ this.maxSharePerScope + " of max-bytes=" + this.maxBytes + " is " + this.maxBytesPerScope,
						(bytesDelta <= this.maxBytesPerScope) ? usage.oldestExpiry() : null, 0, 0, false);
			}
			boolean wasPastShare = usage.isPastShare(this.maxEntriesPerScope, this.maxBytesPerScope);
			usage.entries += entriesDelta;
			usage.bytes += bytesDelta;
			boolean isPastShare = usage.isPastShare(this.maxEntriesPerScope, this.maxBytesPerScope);
			if (wasPastShare != isPastShare) {
				this.scopesPastShare.addAndGet(isPastShare ? 1 : -1);
			}
			if (capped) {
				// Only a capped share's refusal names when the scope's oldest record
				// expires: evicting needs no index per scope.
				Expiry leaving = (current != null) ? current.expiry : null;
				Expiry coming = (next != null) ? next.expiry : null;
				if (leaving != null && leaving != coming) {
					usage.expiries.remove(leaving);
				}
				if (coming != null && coming != leaving) {
					usage.expiries.add(coming);
				}
			}
			return (usage.entries == 0) ? null : usage;
		});
	}

	/**
	 * A bound would be passed; thrown inside a compute, so the map stays unchanged.
	 * Carries when the oldest record that could make room expires.
	 */
	private static final class StoreFullException extends RuntimeException {

		private final @Nullable Instant roomAt;

		/** Records past the bound, to evict. */
		final int entriesShort;

		/** Bytes past the bound, to evict. */
		final long bytesShort;

		/**
		 * Whether evicting could make it fit (not a share, not larger than the store).
		 */
		final boolean evictionCanHelp;

		StoreFullException(String message, @Nullable Instant roomAt, int entriesShort, long bytesShort,
				boolean evictionCanHelp) {
			super(message, null, false, false);
			this.roomAt = roomAt;
			this.entriesShort = entriesShort;
			this.bytesShort = bytesShort;
			this.evictionCanHelp = evictionCanHelp;
		}

		/**
		 * This refusal once eviction found nothing it may take: the room is held by live
		 * records, which end within their lease.
		 */
		StoreFullException ofLiveRecords(Instant roomAt) {
			return new StoreFullException(getMessage() + ", no completed record to evict", roomAt, this.entriesShort,
					this.bytesShort, false);
		}

		IdempotencyStoreFullException refusal(String consequence, Instant now) {
			Duration retryAfter = (this.roomAt != null) ? Duration.between(now, this.roomAt) : null;
			if (retryAfter != null && retryAfter.isNegative()) {
				retryAfter = Duration.ZERO;
			}
			return new IdempotencyStoreFullException("in-memory idempotency store is full (" + getMessage() + "); "
					+ consequence + ((retryAfter != null) ? "; the oldest record expires in " + retryAfter : ""),
					retryAfter);
		}

	}

	/**
	 * When a record expires; the ticket makes it unique and ties break by age. Carries
	 * when the record was made (a take-over keeps it), for {@link #oldestRecordAge()} and
	 * {@link #inspect}.
	 */
	private record Expiry(Instant at, long ticket, Instant created) implements Comparable<Expiry> {

		@Override
		public int compareTo(Expiry other) {
			int byTime = this.at.compareTo(other.at);
			return (byTime != 0) ? byTime : Long.compare(this.ticket, other.ticket);
		}

	}

	/** What one scope holds; read and changed only inside its compute. */
	private static final class ScopeUsage {

		volatile int entries;

		volatile long bytes;

		final TreeSet<Expiry> expiries = new TreeSet<>();

		boolean isPastShare(int maxEntries, long maxBytes) {
			return this.entries > maxEntries || this.bytes > maxBytes;
		}

		@Nullable Instant oldestExpiry() {
			return this.expiries.isEmpty() ? null : this.expiries.first().at();
		}

	}

	private record Entry(String fingerprint, String operation, @Nullable String ownerToken,
			@Nullable Instant leaseExpiresAt, Expiry expiry, byte @Nullable [] encodedResponse) {

		boolean isExpired(Instant now) {
			return !now.isBefore(this.expiry.at());
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
			byte[] encoded = this.encodedResponse;
			StoredResponse response = (encoded != null) ? StoredResponseCodec.decode(encoded) : null;
			return new IdempotencyRecord(id, this.fingerprint, this.operation,
					(response != null) ? RecordState.COMPLETED : RecordState.IN_PROGRESS, this.leaseExpiresAt,
					this.expiry.at(), response);
		}

	}

}
