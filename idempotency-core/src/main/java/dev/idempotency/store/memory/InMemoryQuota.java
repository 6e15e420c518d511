package dev.idempotency.store.memory;

import java.time.Instant;
import java.util.Collections;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import dev.idempotency.store.RecordId;
import dev.idempotency.store.memory.InMemoryIdempotencyStore.OnFull;
import org.jspecify.annotations.Nullable;

/**
 * The in-memory store's accounting: its entry and byte counts against their bounds, each
 * scope's counts against its share, and the expiry index, all moved together by
 * {@link #account} inside the compute that changes an entry, so that they stay exact.
 */
final class InMemoryQuota {

	private final int maxEntries;

	private final long maxBytes;

	private final double maxSharePerScope;

	private final int maxEntriesPerScope;

	private final long maxBytesPerScope;

	private final OnFull onFull;

	/**
	 * One element per entry, oldest expiry first. Changed only inside the compute that
	 * changes the entry, so under the entry's lock the two agree.
	 */
	private final ConcurrentSkipListMap<Expiry, RecordId> byExpiry;

	/**
	 * What each scope holds, changed inside its own compute (nested in the entry's);
	 * {@code null} when a scope may fill the whole store.
	 */
	private final @Nullable ConcurrentHashMap<String, ScopeUsage> scopes;

	private final AtomicInteger size = new AtomicInteger();

	/** Scopes that hold more than their share now; changed inside their compute. */
	private final AtomicInteger scopesPastShare = new AtomicInteger();

	private final AtomicLong bytes = new AtomicLong();

	InMemoryQuota(int maxEntries, long maxBytes, double maxSharePerScope, OnFull onFull,
			ConcurrentSkipListMap<Expiry, RecordId> byExpiry) {
		this.maxEntries = maxEntries;
		this.maxBytes = maxBytes;
		this.maxSharePerScope = maxSharePerScope;
		this.maxEntriesPerScope = (int) Math.max(1, Math.floor(maxEntries * maxSharePerScope));
		this.maxBytesPerScope = (long) Math.max(1, Math.floor(maxBytes * maxSharePerScope));
		this.scopes = (maxSharePerScope < 1) ? new ConcurrentHashMap<>() : null;
		this.onFull = onFull;
		this.byExpiry = byExpiry;
	}

	/**
	 * Checks the bounds a quota is made with.
	 * @throws IllegalArgumentException naming the property of a value out of range
	 */
	static void checkBounds(int maxEntries, long maxBytes, double maxSharePerScope) {
		if (maxEntries < 1) {
			throw new IllegalArgumentException(
					"idempotency.store.memory.max-entries must be at least 1, was " + maxEntries);
		}
		if (maxBytes < 1) {
			throw new IllegalArgumentException("idempotency.store.memory.max-bytes must be positive, was " + maxBytes);
		}
		if (!(maxSharePerScope > 0 && maxSharePerScope <= 1)) {
			throw new IllegalArgumentException(
					"idempotency.store.memory.max-share-per-scope must be more than 0 and at most 1, was "
							+ maxSharePerScope);
		}
	}

	int maxEntries() {
		return this.maxEntries;
	}

	long maxBytes() {
		return this.maxBytes;
	}

	double maxSharePerScope() {
		return this.maxSharePerScope;
	}

	int maxEntriesPerScope() {
		return this.maxEntriesPerScope;
	}

	long maxBytesPerScope() {
		return this.maxBytesPerScope;
	}

	OnFull onFull() {
		return this.onFull;
	}

	int size() {
		return this.size.get();
	}

	long bytes() {
		return this.bytes.get();
	}

	/**
	 * Moves the counts from {@code current} to {@code next} (either may be null), and
	 * their places in the expiry indexes, inside the compute that makes that change.
	 * Growth past a bound throws {@link StoreFullException} with the counts and indexes
	 * unchanged, which leaves the map unchanged too. Compare-and-set, not add-then-undo,
	 * so that no reader ever sees a count past its bound.
	 */
	void account(RecordId id, @Nullable InMemoryEntry current, @Nullable InMemoryEntry next) {
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
		Expiry leaving = (current != null) ? current.expiry() : null;
		Expiry coming = (next != null) ? next.expiry() : null;
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
					int counted = held;
					throw new StoreFullException(
							() -> counted + " records, idempotency.store.memory.max-entries=" + this.maxEntries,
							oldestExpiry(), held + entriesDelta - this.maxEntries, 0, true);
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
				long counted = retained;
				throw new StoreFullException(
						() -> counted + " of " + this.maxBytes + " bytes retained, " + bytesDelta
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

	private void countInScope(String scope, @Nullable InMemoryEntry current, @Nullable InMemoryEntry next,
			int entriesDelta, long bytesDelta) {
		ConcurrentHashMap<String, ScopeUsage> counts = this.scopes;
		if (counts == null) {
			return;
		}
		boolean capped = this.onFull == OnFull.REFUSE;
		counts.compute(scope, (name, counted) -> {
			ScopeUsage usage = (counted != null) ? counted : new ScopeUsage();
			if (capped && entriesDelta > 0 && usage.entries + entriesDelta > this.maxEntriesPerScope) {
				int held = usage.entries;
				throw new StoreFullException(() -> "this scope holds " + held + " records, its share"
						+ " idempotency.store.memory.max-share-per-scope=" + this.maxSharePerScope + " of max-entries="
						+ this.maxEntries, usage.oldestExpiry(), 0, 0, false);
			}
			if (capped && bytesDelta > 0 && usage.bytes + bytesDelta > this.maxBytesPerScope) {
				long retained = usage.bytes;
				throw new StoreFullException(() -> "this scope retains " + retained + " bytes, " + bytesDelta
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
				Expiry leaving = (current != null) ? current.expiry() : null;
				Expiry coming = (next != null) ? next.expiry() : null;
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
	 * Whether {@code scope} holds more than its share once it grows by {@code entries}
	 * and {@code bytes}; never when there is no share. Read outside the scope's compute:
	 * a hint for choosing what to evict, not a bound.
	 */
	boolean isPastShare(String scope, int entries, long bytes) {
		ConcurrentHashMap<String, ScopeUsage> counts = this.scopes;
		ScopeUsage usage = (counts != null) ? counts.get(scope) : null;
		return usage != null
				&& (usage.entries + entries > this.maxEntriesPerScope || usage.bytes + bytes > this.maxBytesPerScope);
	}

	/** Whether some scope holds more than its share now (never without a share). */
	boolean anyScopePastShare() {
		return this.scopes != null && this.scopesPastShare.get() > 0;
	}

	/** What {@code scope} holds by the running counts; none without a share. */
	InMemoryIdempotencyStore.Usage usage(String scope) {
		ScopeUsage usage = (this.scopes != null) ? this.scopes.get(scope) : null;
		return (usage != null) ? new InMemoryIdempotencyStore.Usage(usage.entries, usage.bytes)
				: InMemoryIdempotencyStore.Usage.NONE;
	}

	/** Every scope counted now, with what it holds; empty without a share. */
	Map<String, InMemoryIdempotencyStore.Usage> usageByScope() {
		if (this.scopes == null) {
			return Map.of();
		}
		Map<String, InMemoryIdempotencyStore.Usage> copy = new TreeMap<>();
		this.scopes
			.forEach((scope, usage) -> copy.put(scope, new InMemoryIdempotencyStore.Usage(usage.entries, usage.bytes)));
		return Collections.unmodifiableMap(copy);
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

}
