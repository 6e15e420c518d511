package dev.idempotency.store.contract;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import dev.idempotency.store.CompletedRecordRequest;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.ReserveRequest;
import dev.idempotency.store.ReserveResult;
import dev.idempotency.store.StoredResponse;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What every part of the store contract shares: the store under test, made before and
 * released after each test, a scope unique to the run, and the requests the tests send.
 * Part of {@link IdempotencyStoreContractTests}: a store's test extends that class, not
 * this one.
 */
public abstract class StoreContractSupport {

	/** A lease long enough that it never runs out by accident during a test step. */
	protected static final Duration LONG_LEASE = Duration.ofMinutes(5);

	/** A lease short enough to wait out. */
	protected static final Duration SHORT_LEASE = Duration.ofMillis(800);

	protected static final Duration RETENTION = Duration.ofMinutes(10);

	protected IdempotencyStore store;

	private final String scope = "contract-" + UUID.randomUUID();

	/** Makes the store under test; called before each test. */
	protected abstract IdempotencyStore createStore() throws Exception;

	/** Releases what {@link #createStore()} made; called after each test. */
	protected void destroyStore(IdempotencyStore store) throws Exception {
	}

	/** Lets {@code duration} pass by the store's clock. */
	protected void elapse(Duration duration) throws InterruptedException {
		Thread.sleep(duration.toMillis() + 150);
	}

	@BeforeEach
	void setUpStore() throws Exception {
		this.store = createStore();
	}

	@AfterEach
	void tearDownStore() throws Exception {
		destroyStore(this.store);
	}

	protected RecordId newId() {
		return new RecordId(this.scope, UUID.randomUUID().toString());
	}

	/** The record of {@code key} in a scope of this run's own, {@code suffix} apart. */
	protected RecordId idInScope(String suffix, String key) {
		return new RecordId(this.scope + suffix, key);
	}

	protected static String token() {
		return UUID.randomUUID().toString();
	}

	protected static ReserveRequest request(RecordId id, String fingerprint, String owner, Duration lease,
			Duration retention) {
		return new ReserveRequest(id, fingerprint, "contract-op", owner, lease, retention);
	}

	protected static ReserveRequest request(RecordId id, String fingerprint, String owner, Duration lease) {
		return request(id, fingerprint, owner, lease, RETENTION);
	}

	protected static StoredResponse response(int status, String body) {
		return new StoredResponse(status, Map.of("Content-Type", List.of("application/json")),
				body.getBytes(java.nio.charset.StandardCharsets.UTF_8));
	}

	protected static IdempotencyRecord existing(ReserveResult result) {
		assertThat(result).isInstanceOf(ReserveResult.Existing.class);
		return ((ReserveResult.Existing) result).record();
	}

	protected static CompletedRecordRequest completed(RecordId id, String fingerprint, StoredResponse response,
			Duration retention) {
		return new CompletedRecordRequest(id, fingerprint, "contract-op", response, retention);
	}

}
