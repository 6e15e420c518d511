package dev.idempotency.store.memory;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Predicate;
import java.util.function.Supplier;

import dev.idempotency.store.RecordId;
import dev.idempotency.store.memory.InMemoryIdempotencyStore.OnFull;
import org.jspecify.annotations.Nullable;

/**
 * How the in-memory store makes room: the purge drops expired records, oldest first, and
 * eviction drops completed records, the one closest to its expiry first, as the scopes'
 * shares allow. Both walk the expiry index and change an entry only in its compute, with
 * the {@link InMemoryQuota}'s accounting.
 */
final class InMemoryReclaimer {

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

	private final ConcurrentHashMap<RecordId, InMemoryEntry> entries;

	private final ConcurrentSkipListMap<Expiry, RecordId> byExpiry;

	private final InMemoryQuota quota;

	private final Clock clock;

	private final LongAdder purgeVisits = new LongAdder();

	private final LongAdder evictions = new LongAdder();

	InMemoryReclaimer(ConcurrentHashMap<RecordId, InMemoryEntry> entries,
			ConcurrentSkipListMap<Expiry, RecordId> byExpiry, InMemoryQuota quota, Clock clock) {
		this.entries = entries;
		this.clock = clock;
		this.byExpiry = byExpiry;
		this.quota = quota;
	}

	/**
	 * Runs {@code change}; if the store is full, drops the expired records and, if any
	 * were, runs it once more; if it is still full and the store evicts, evicts completed
	 * records for the room it lacks and runs it again, a few times at most (others may
	 * take the room made).
	 * @throws StoreFullException if it is still full
	 */
	<T> T withRoomMade(String scope, Supplier<T> change) {
		StoreFullException full;
		try {
			return change.get();
		}
		catch (StoreFullException ex) {
			full = ex;
		}
		// A store that evicts is full in the steady state, with nothing expired: the
		// change is not run again for nothing.
		if (purgeExpired(this.clock.instant(), Integer.MAX_VALUE) > 0) {
			try {
				return change.get();
			}
			catch (StoreFullException ex) {
				full = ex;
			}
		}
		OnFull onFull = this.quota.onFull();
		for (int attempt = 1;; attempt++) {
			if (onFull == OnFull.REFUSE || !full.evictionCanHelp || attempt == MAX_FIT_ATTEMPTS
					|| !evictFor(scope, full.entriesShort, full.bytesShort)) {
				throw (onFull == OnFull.EVICT && full.evictionCanHelp)
						? full.ofLiveRecords(this.clock.instant().plus(LIVE_RECORDS_RETRY_AFTER)) : full;
			}
			try {
				return change.get();
			}
			catch (StoreFullException ex) {
				full = ex;
			}
		}
	}

	/** How long ago the record next in line to go was made; zero for none. */
	Duration oldestRecordAge() {
		Map.Entry<Expiry, RecordId> oldest = this.byExpiry.firstEntry();
		if (oldest == null) {
			return Duration.ZERO;
		}
		Duration age = Duration.between(oldest.getKey().created(), this.clock.instant());
		return age.isNegative() ? Duration.ZERO : age;
	}

	/** Completed records evicted since the store was created. */
	long evictions() {
		return this.evictions.sum();
	}

	/** Records the purge has looked at since the store was created. */
	long recordsVisitedByPurge() {
		return this.purgeVisits.sum();
	}

	/**
	 * Drops up to {@code maxRecords} records expired at {@code now}, oldest first: visits
	 * the expired records only, and stops at the first that has not expired.
	 */
	int purgeExpired(Instant now, int maxRecords) {
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

	/**
	 * Removes the entry of {@code id} if {@code expiry} is still its expiry (then it has
	 * expired: the caller found it due in the index). Under the entry's lock the index
	 * agrees with the map, so an element naming another expiry is already gone; it is
	 * removed regardless, so that a purge always moves on.
	 */
	private boolean removeIfExpired(RecordId id, Expiry expiry) {
		boolean[] removed = new boolean[1];
		this.entries.compute(id, (key, current) -> {
			if (current != null && current.expiry().equals(expiry)) {
				this.quota.account(key, current, null);
				removed[0] = true;
				return null;
			}
			this.byExpiry.remove(expiry, id);
			return current;
		});
		return removed[0];
	}

	/**
	 * Evicts completed records until {@code entries} records and {@code bytes} bytes are
	 * free: from {@code scope} alone when it is past its share, else first from the
	 * scopes past theirs.
	 * @return whether that room was made
	 */
	boolean evictFor(String scope, int entries, long bytes) {
		boolean ownOnly = this.quota.isPastShare(scope, 1, 0);
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
		if (this.quota.anyScopePastShare()) {
			long freed = evictFirst((id) -> this.quota.isPastShare(id.scope(), 0, 0));
			if (freed >= 0) {
				return freed;
			}
		}
		return evictFirst((id) -> true);
	}

	/**
	 * Evicts the first completed record in the index whose id {@code may} take, looking
	 * at {@link InMemoryIdempotencyStore#MAX_EVICTION_VISITS} elements at most.
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
			InMemoryEntry entry = this.entries.get(id);
			if (entry == null || entry.response() == null || !entry.expiry().equals(candidate.getKey())) {
				continue;
			}
			long freed = removeIfCompleted(candidate.getValue(), candidate.getKey());
			if (freed >= 0) {
				this.evictions.increment();
				return freed;
			}
		}
		return -1;
	}

	/**
	 * Removes the entry of {@code id} if it is still the completed record of
	 * {@code expiry}.
	 * @return the weight freed, or -1 if it was not
	 */
	private long removeIfCompleted(RecordId id, Expiry expiry) {
		long[] freed = { -1 };
		this.entries.computeIfPresent(id, (key, current) -> {
			if (current.response() == null || !current.expiry().equals(expiry)) {
				return current;
			}
			freed[0] = current.weight(key);
			this.quota.account(key, current, null);
			return null;
		});
		return freed[0];
	}

}
