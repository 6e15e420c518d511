package dev.idempotency.store.memory;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

import dev.idempotency.store.CompletedRecordRequest;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.IdempotencyStoreFullException;
import dev.idempotency.store.InspectedRecord;
import dev.idempotency.store.RecordId;
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
 * bytes they retain ({@code maxBytes}: the response's encoded length, the strings of the
 * record, and a fixed 256 bytes per entry for the map node and the objects around them).
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
 * Built with {@link #builder()} (defaults: the {@code idempotency.store.memory.*}
 * properties); its constructor is package-private so that AOP proxies can subclass it.
 * <p>
 * A record expires at the end of its retention, as in every store; heartbeats extend its
 * lease, not its retention, so they leave its place in the index unchanged.
 *
 * @since 0.1.0
 */
public class InMemoryIdempotencyStore implements IdempotencyStore {

	/**
	 * What a scope holds: its records, expired ones not yet dropped included, and their
	 * estimated bytes (counted as described on the class).
	 *
	 * @since 0.2.0
	 */
	public record Usage(long records, long bytes) {

		/** Nothing held. */
		public static final Usage NONE = new Usage(0, 0);

	}

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

	private final ConcurrentHashMap<RecordId, InMemoryEntry> entries = new ConcurrentHashMap<>();

	/** One element per entry, oldest expiry first; kept by {@link #quota}. */
	private final ConcurrentSkipListMap<Expiry, RecordId> byExpiry = new ConcurrentSkipListMap<>();

	private final AtomicLong tickets = new AtomicLong();

	private final Clock clock;

	private final InMemoryQuota quota;

	private final InMemoryReclaimer reclaimer;

	/** The smallest body stored deflated, in bytes ({@link Builder#deflateFrom}). */
	private final int deflateFrom;

	InMemoryIdempotencyStore(Builder builder) {
		this.clock = builder.clock;
		this.deflateFrom = builder.deflateFrom;
		this.quota = new InMemoryQuota(builder.maxEntries, builder.maxBytes, builder.maxSharePerScope, builder.onFull,
				this.byExpiry);
		this.reclaimer = new InMemoryReclaimer(this.entries, this.byExpiry, this.quota, this.clock);
	}

	/**
	 * A builder with the defaults of the {@code idempotency.store.memory.*} properties:
	 * 100,000 records, {@link #defaultMaxBytes()}, a share of 0.25 per scope,
	 * {@link OnFull#EVICT}, the system's UTC clock.
	 * @since 0.2.0
	 */
	public static Builder builder() {
		return new Builder();
	}

	/** The byte bound used when none is configured: 1/16 of the JVM's maximum heap. */
	public static long defaultMaxBytes() {
		return Runtime.getRuntime().maxMemory() / 16;
	}

	@Override
	public ReserveResult reserve(ReserveRequest request) {
		try {
			return this.reclaimer.withRoomMade(request.id().scope(), () -> tryReserve(request));
		}
		catch (StoreFullException stillFull) {
			throw stillFull.refusal("new key refused, live records are never evicted", this.clock.instant());
		}
	}

	@Override
	public boolean complete(RecordId id, String ownerToken, StoredResponse response) {
		KeptResponse kept = KeptResponse.of(response, this.deflateFrom);
		try {
			return this.reclaimer.withRoomMade(id.scope(),
					() -> transition(id, ownerToken, (current) -> new InMemoryEntry(current.fingerprint(),
							current.operation(), null, null, current.expiry(), kept)));
		}
		catch (StoreFullException stillFull) {
			// Not stored: free the key so that a retry runs again instead of waiting
			// out the lease.
			transition(id, ownerToken, (current) -> null);
			throw stillFull.refusal(
					"the response of " + kept.bytes() + " bytes was not stored and the key was released",
					this.clock.instant());
		}
	}

	@Override
	public Optional<IdempotencyRecord> recordCompleted(CompletedRecordRequest request) {
		KeptResponse kept = KeptResponse.of(request.response(), this.deflateFrom);
		try {
			return this.reclaimer.withRoomMade(request.id().scope(), () -> tryRecordCompleted(request, kept));
		}
		catch (StoreFullException stillFull) {
			throw stillFull.refusal("the response of " + kept.bytes() + " bytes was not recorded",
					this.clock.instant());
		}
	}

	private Optional<IdempotencyRecord> tryRecordCompleted(CompletedRecordRequest request, KeptResponse kept) {
		Instant now = this.clock.instant();
		IdempotencyRecord[] existing = new IdempotencyRecord[1];
		this.entries.compute(request.id(), (id, current) -> {
			if (current == null || current.isExpired(now)) {
				InMemoryEntry next = new InMemoryEntry(request.fingerprint(), request.operation(), null, null,
						newExpiry(now, request.retention()), kept);
				this.quota.account(id, current, next);
				return next;
			}
			existing[0] = current.toRecord(id);
			return current;
		});
		return Optional.ofNullable(existing[0]);
	}

	@Override
	public boolean release(RecordId id, String ownerToken) {
		return transition(id, ownerToken, (current) -> null);
	}

	@Override
	public boolean heartbeat(RecordId id, String ownerToken, Duration lease) {
		Instant leaseExpiresAt = this.clock.instant().plus(lease);
		return transition(id, ownerToken, (current) -> new InMemoryEntry(current.fingerprint(), current.operation(),
				ownerToken, leaseExpiresAt, current.expiry(), null));
	}

	@Override
	public Optional<IdempotencyRecord> find(RecordId id) {
		InMemoryEntry entry = live(id);
		return (entry != null) ? Optional.of(entry.toRecord(id)) : Optional.empty();
	}

	@Override
	public Optional<InspectedRecord> inspect(RecordId id) {
		InMemoryEntry entry = live(id);
		return (entry != null) ? Optional.of(inspected(id, entry)) : Optional.empty();
	}

	/**
	 * Walks this store's map (at most {@code maxEntries} records, in memory): there is no
	 * server to read every record from, so no index on the key is kept for it.
	 */
	@Override
	public List<InspectedRecord> inspectByKey(String key, int maxRecords) {
		Instant now = this.clock.instant();
		return this.entries.entrySet()
			.stream()
			.filter((entry) -> entry.getKey().key().equals(key) && !entry.getValue().isExpired(now))
			.sorted(Map.Entry.comparingByKey(Comparator.comparing(RecordId::scope)))
			.limit(maxRecords)
			.map((entry) -> inspected(entry.getKey(), entry.getValue()))
			.toList();
	}

	private static InspectedRecord inspected(RecordId id, InMemoryEntry entry) {
		return new InspectedRecord(entry.toRecord(id), entry.expiry().created(), entry.ownerToken());
	}

	private @Nullable InMemoryEntry live(RecordId id) {
		InMemoryEntry entry = this.entries.get(id);
		return (entry == null || entry.isExpired(this.clock.instant())) ? null : entry;
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
			this.quota.account(key, current, null);
			removed[0] = true;
			return null;
		});
		return removed[0];
	}

	/** Drops expired records oldest first, visiting only those and the next one. */
	@Override
	public int purgeExpired(int maxRecords) {
		return this.reclaimer.purgeExpired(this.clock.instant(), maxRecords);
	}

	@Override
	public String name() {
		return "memory";
	}

	/** Its calls touch memory only: a caller that must not block makes them itself. */
	@Override
	public boolean isBlocking() {
		return false;
	}

	/** How many records the store holds now, expired ones not yet dropped included. */
	public int size() {
		return this.quota.size();
	}

	/** The estimated bytes the held records retain, counted as described on the class. */
	public long retainedBytes() {
		return this.quota.bytes();
	}

	/** The bound on the number of records this store was created with. */
	public int maxEntries() {
		return this.quota.maxEntries();
	}

	/** The bound on {@link #retainedBytes()} this store was created with. */
	public long maxBytes() {
		return this.quota.maxBytes();
	}

	/** The most of each bound one scope may hold (1: the whole store). */
	public double maxSharePerScope() {
		return this.quota.maxSharePerScope();
	}

	/**
	 * What a change that does not fit gets once expired records are dropped.
	 * @since 0.2.0
	 */
	public OnFull onFull() {
		return this.quota.onFull();
	}

	/**
	 * Completed records evicted to make room since the store was created.
	 * @since 0.2.0
	 */
	public long evictions() {
		return this.reclaimer.evictions();
	}

	/**
	 * How long ago the record next in line to go (expired, or evicted first) was made:
	 * while records are evicted, the retention a key actually gets; {@link Duration#ZERO}
	 * for an empty store.
	 * @since 0.2.0
	 */
	public Duration oldestRecordAge() {
		return this.reclaimer.oldestRecordAge();
	}

	/**
	 * Records the purge looked at since the store was created: expired ones only (a
	 * refused change looks at none); beside the records dropped, what purging costs.
	 * @since 0.2.0
	 */
	public long purgeVisits() {
		return this.reclaimer.recordsVisitedByPurge();
	}

	/**
	 * What {@code scope} ({@link RecordId#scope()}) holds now, by the running counts its
	 * share is checked against; {@link Usage#NONE} for none, and for all without a share.
	 * @since 0.2.0
	 */
	public Usage usage(String scope) {
		Objects.requireNonNull(scope, "scope");
		return this.quota.usage(scope);
	}

	/**
	 * Every scope holding records, with what it holds: which tenant fills the store. A
	 * copy taken scope by scope while the store changes; empty without a share.
	 * @since 0.2.0
	 */
	public Map<String, Usage> usageByScope() {
		return this.quota.usageByScope();
	}

	private ReserveResult tryReserve(ReserveRequest request) {
		Instant now = this.clock.instant();
		ReserveResult[] result = new ReserveResult[1];
		this.entries.compute(request.id(), (id, current) -> {
			if (current == null || current.isExpired(now)) {
				InMemoryEntry next = new InMemoryEntry(request.fingerprint(), request.operation(), request.ownerToken(),
						now.plus(request.lease()), newExpiry(now, request.retention()), null);
				this.quota.account(id, current, next);
				result[0] = new ReserveResult.Acquired(false);
				return next;
			}
			if (current.response() == null && !now.isBefore(current.leaseExpiresAt())
					&& current.fingerprint().equals(request.fingerprint())) {
				InMemoryEntry next = new InMemoryEntry(current.fingerprint(), current.operation(), request.ownerToken(),
						now.plus(request.lease()), current.expiry(), null);
				this.quota.account(id, current, next);
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
	private boolean transition(RecordId id, String ownerToken,
			Function<InMemoryEntry, @Nullable InMemoryEntry> change) {
		Instant now = this.clock.instant();
		boolean[] changed = new boolean[1];
		this.entries.computeIfPresent(id, (key, current) -> {
			if (current.isExpired(now) || current.response() != null || !ownerToken.equals(current.ownerToken())) {
				return current;
			}
			InMemoryEntry next = change.apply(current);
			this.quota.account(key, current, next);
			changed[0] = true;
			return next;
		});
		return changed[0];
	}

	private Expiry newExpiry(Instant now, Duration retention) {
		return new Expiry(now.plus(retention), this.tickets.incrementAndGet(), now);
	}

	/**
	 * The configuration of an {@link InMemoryIdempotencyStore}, checked by
	 * {@link #build()}.
	 *
	 * @since 0.2.0
	 */
	public static final class Builder {

		private int deflateFrom = StoredResponseCodec.NEVER_DEFLATE;

		private Clock clock = Clock.systemUTC();

		private int maxEntries = 100_000;

		private long maxBytes = defaultMaxBytes();

		private double maxSharePerScope = 0.25;

		private OnFull onFull = OnFull.EVICT;

		private Builder() {
		}

		/**
		 * The clock that decides expiry and leases; the system's UTC clock by default.
		 */
		public Builder clock(Clock clock) {
			this.clock = Objects.requireNonNull(clock, "clock");
			return this;
		}

		/** The most records held, expired ones not yet dropped included; at least 1. */
		public Builder maxEntries(int maxEntries) {
			this.maxEntries = maxEntries;
			return this;
		}

		/**
		 * The most bytes the records retain, estimated as described on the store;
		 * positive. {@link InMemoryIdempotencyStore#defaultMaxBytes()} by default.
		 */
		public Builder maxBytes(long maxBytes) {
			this.maxBytes = maxBytes;
			return this;
		}

		/**
		 * The most of each bound one scope may hold (each bound times the share, rounded
		 * down, at least one record and one byte): more than 0, at most 1 (1: no share).
		 */
		public Builder maxSharePerScope(double maxSharePerScope) {
			this.maxSharePerScope = maxSharePerScope;
			return this;
		}

		/** What a change that does not fit gets once expired records are dropped. */
		public Builder onFull(OnFull onFull) {
			this.onFull = Objects.requireNonNull(onFull, "onFull");
			return this;
		}

		/**
		 * The smallest answer body kept deflated, in bytes, when deflating makes it
		 * smaller; {@link StoredResponseCodec#NEVER_DEFLATE}: every body as it is. By
		 * default {@link StoredResponseCodec#NEVER_DEFLATE} (bodies kept as they are).
		 * @since 0.2.0
		 */
		public Builder deflateFrom(int deflateFrom) {
			this.deflateFrom = StoredResponseCodec.checkDeflateFrom(deflateFrom);
			return this;
		}

		/**
		 * The store.
		 * @throws IllegalArgumentException naming the property of a value out of range
		 */
		public InMemoryIdempotencyStore build() {
			InMemoryQuota.checkBounds(this.maxEntries, this.maxBytes, this.maxSharePerScope);
			return new InMemoryIdempotencyStore(this);
		}

	}

}
