package dev.idempotency.store.contract;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

import dev.idempotency.core.IdempotencyError;
import dev.idempotency.core.IdempotencySettings;
import dev.idempotency.core.IdempotencySettings.FailureMode;
import dev.idempotency.core.IdempotencySettings.Mode;
import dev.idempotency.core.KeyFormat;
import dev.idempotency.core.internal.Decision;
import dev.idempotency.core.internal.IdempotencyEngine;
import dev.idempotency.core.internal.IdempotentCall;
import dev.idempotency.core.internal.Reservation;

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

	/** The engine's default settings but for these. */
	protected static IdempotencySettings settings(Mode mode, FailureMode failureMode, Duration inFlightWait) {
		return IdempotencySettings.builder().mode(mode).failureMode(failureMode).inFlightWait(inFlightWait).build();
	}

	/** A call of the operation {@code contract-op} with the key of {@code id}. */
	protected static Decision begin(IdempotencyEngine engine, RecordId id, String fingerprint) {
		return engine.begin(new IdempotentCall(id.scope(), List.of(id.key()), KeyFormat.OPAQUE, false, "contract-op",
				() -> fingerprint));
	}

	protected static Reservation proceeds(Decision decision) {
		assertThat(decision).isInstanceOf(Decision.Proceed.class);
		Reservation reservation = ((Decision.Proceed) decision).reservation();
		assertThat(reservation).isNotNull();
		return Objects.requireNonNull(reservation);
	}

	protected static StoredResponse replayed(Decision decision) {
		assertThat(decision).isInstanceOf(Decision.Replay.class);
		return ((Decision.Replay) decision).response();
	}

	protected static IdempotencyError rejected(Decision decision) {
		assertThat(decision).isInstanceOf(Decision.Reject.class);
		return ((Decision.Reject) decision).error();
	}

	protected static CompletedRecordRequest completed(RecordId id, String fingerprint, StoredResponse response,
			Duration retention) {
		return new CompletedRecordRequest(id, fingerprint, "contract-op", response, retention);
	}

}
