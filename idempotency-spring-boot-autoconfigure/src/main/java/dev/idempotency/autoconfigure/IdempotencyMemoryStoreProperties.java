package dev.idempotency.autoconfigure;

import dev.idempotency.store.memory.InMemoryIdempotencyStore;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.unit.DataSize;

/**
 * Configuration of the in-memory idempotency store
 * ({@code idempotency.store.type=memory}, the default): one JVM only.
 *
 * @since 0.1.0
 */
@ConfigurationProperties("idempotency.store.memory")
public class IdempotencyMemoryStoreProperties {

	/**
	 * Most records kept. Past it (or past max-bytes), expired records are dropped first,
	 * then on-full decides: evict completed records, or refuse. Live records are never
	 * evicted.
	 */
	private int maxEntries = 100_000;

	/**
	 * Most bytes the records may retain (estimated: stored response, record strings and
	 * 256 bytes per record). When unset, 1/16 of the JVM's maximum heap
	 * (Runtime.maxMemory()). Past it, expired records are dropped first, then on-full
	 * decides; a response larger than the whole bound is not stored and its key is
	 * released.
	 */
	private @Nullable DataSize maxBytes;

	/**
	 * Most of max-entries and of max-bytes one scope (by default one principal, or all
	 * anonymous requests together) may hold, as a fraction: more than 0, at most 1 (1: no
	 * share). With on-full=evict it bites only when scopes compete for a full store: a
	 * scope past its share makes room from its own completed records, never another's,
	 * and a single-scope application uses the whole store. With on-full=refuse it is a
	 * cap: past it that scope's new keys are refused (503 when fail-closed) while other
	 * scopes are still served.
	 */
	private double maxSharePerScope = 0.25;

	/**
	 * What a new key or a response that does not fit gets once expired records are
	 * dropped. evict: completed records are evicted, the one closest to its expiry first,
	 * and a retry of an evicted key runs again (counted in
	 * idempotency.store.memory.evictions; the retention in effect is the gauge
	 * idempotency.store.memory.oldest.age); only a store full of live records refuses.
	 * refuse: the request is refused (503 with Retry-After until the oldest record
	 * expires), so that every key keeps its whole retention.
	 */
	private InMemoryIdempotencyStore.OnFull onFull = InMemoryIdempotencyStore.OnFull.EVICT;

	public int getMaxEntries() {
		return this.maxEntries;
	}

	public void setMaxEntries(int maxEntries) {
		this.maxEntries = maxEntries;
	}

	public @Nullable DataSize getMaxBytes() {
		return this.maxBytes;
	}

	public void setMaxBytes(@Nullable DataSize maxBytes) {
		this.maxBytes = maxBytes;
	}

	public double getMaxSharePerScope() {
		return this.maxSharePerScope;
	}

	public void setMaxSharePerScope(double maxSharePerScope) {
		this.maxSharePerScope = maxSharePerScope;
	}

	public InMemoryIdempotencyStore.OnFull getOnFull() {
		return this.onFull;
	}

	public void setOnFull(InMemoryIdempotencyStore.OnFull onFull) {
		this.onFull = onFull;
	}

}
