package dev.idempotency.store.contract;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.IdempotencyStoreException;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.RecordState;
import dev.idempotency.store.ReserveResult;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

/**
 * The variants for a caller that must not block ({@code reserveAsync},
 * {@code completeAsync}, {@code releaseAsync}, {@code recordCompletedAsync},
 * {@code findAsync}): the same transitions as the blocking methods, and a store that
 * fails answers with a failed stage, not a thrown exception. Whether a store runs them on
 * the executor given or on a client of its own is its own business: the contract only
 * gives it a real executor. Part of {@link IdempotencyStoreContractTests}: a store's test
 * extends that class, not this one.
 */
public abstract class AsyncContract extends LeaseContract {

	/** How long a stage may take before the test gives up on it. */
	private static final Duration STAGE_TIMEOUT = Duration.ofSeconds(30);

	/**
	 * The executor the async variants are given, a bounded one as the reactive door's;
	 * one per test (a store's test may share one instance between its tests).
	 */
	private ExecutorService executor;

	/**
	 * Makes a store of the kind under test whose reservation of a new key fails with an
	 * {@link IdempotencyStoreException}: one whose server cannot be reached (a closed
	 * port, a pool that gets no connection), or, for a store without a server, one that
	 * refuses (full). The test releases what it made ({@link #destroyStore} is called
	 * only for {@link #createStore()}'s store).
	 */
	protected abstract IdempotencyStore createUnreachableStore() throws Exception;

	@BeforeEach
	void startExecutor() {
		this.executor = Executors.newFixedThreadPool(4);
	}

	@AfterEach
	void stopExecutor() {
		this.executor.shutdownNow();
	}

	@Test
	void asyncReservationAcquiresANewKeyAndReportsALiveOne() throws Exception {
		RecordId id = newId();
		assertThat(value(this.store.reserveAsync(request(id, "fp-a", token(), LONG_LEASE), this.executor)))
			.isEqualTo(new ReserveResult.Acquired(false));
		IdempotencyRecord live = existing(
				value(this.store.reserveAsync(request(id, "fp-b", token(), LONG_LEASE), this.executor)));
		assertThat(live.state()).isEqualTo(RecordState.IN_PROGRESS);
		assertThat(live.fingerprint()).as("another request changes nothing").isEqualTo("fp-a");
		assertThat(live.operation()).isEqualTo("contract-op");
		assertThat(value(this.store.findAsync(id, this.executor))).contains(live);
	}

	@Test
	void asyncReservationTakesOverAnExpiredLease() throws Exception {
		RecordId id = newId();
		String first = token();
		this.store.reserve(request(id, "fp-a", first, SHORT_LEASE));
		elapse(SHORT_LEASE);
		String second = token();
		assertThat(value(this.store.reserveAsync(request(id, "fp-a", second, LONG_LEASE), this.executor)))
			.isEqualTo(new ReserveResult.Acquired(true));
		assertThat(value(this.store.completeAsync(id, first, response(200, "{\"first\":1}"), this.executor)))
			.as("the first owner is fenced off")
			.isFalse();
		assertThat(value(this.store.completeAsync(id, second, response(201, "{\"second\":2}"), this.executor)))
			.isTrue();
		assertThat(this.store.find(id).orElseThrow().response()).isEqualTo(response(201, "{\"second\":2}"));
	}

	@Test
	void asyncCompletionIsFencedByTheOwnerToken() throws Exception {
		RecordId id = newId();
		String owner = token();
		this.store.reserve(request(id, "fp-a", owner, LONG_LEASE));
		assertThat(value(this.store.completeAsync(id, token(), response(200, "{\"other\":1}"), this.executor)))
			.as("another token completes nothing")
			.isFalse();
		assertThat(this.store.find(id).orElseThrow().state()).isEqualTo(RecordState.IN_PROGRESS);
		assertThat(value(this.store.completeAsync(id, owner, response(201, "{\"owner\":1}"), this.executor))).isTrue();
		IdempotencyRecord completed = value(this.store.findAsync(id, this.executor)).orElseThrow();
		assertThat(completed.state()).isEqualTo(RecordState.COMPLETED);
		assertThat(completed.response()).isEqualTo(response(201, "{\"owner\":1}"));
		assertThat(value(this.store.completeAsync(id, owner, response(500, "{}"), this.executor))).as("completed once")
			.isFalse();
		assertThat(value(this.store.completeAsync(newId(), owner, response(200, "{}"), this.executor)))
			.as("no record, nothing to complete")
			.isFalse();
	}

	@Test
	void asyncReleaseIsFencedByTheOwnerToken() throws Exception {
		RecordId id = newId();
		String owner = token();
		this.store.reserve(request(id, "fp-a", owner, LONG_LEASE));
		assertThat(value(this.store.releaseAsync(id, token(), this.executor))).as("another token releases nothing")
			.isFalse();
		assertThat(this.store.find(id)).isPresent();
		assertThat(value(this.store.releaseAsync(id, owner, this.executor))).isTrue();
		assertThat(value(this.store.findAsync(id, this.executor))).isEmpty();
		assertThat(value(this.store.releaseAsync(id, owner, this.executor))).as("released once").isFalse();
		assertThat(this.store.reserve(request(id, "fp-b", token(), LONG_LEASE))).as("a retry runs the operation again")
			.isEqualTo(new ReserveResult.Acquired(false));
	}

	@Test
	void asyncRecordingStoresAnAbsentKeyAndReturnsAPresentOne() throws Exception {
		RecordId id = newId();
		assertThat(value(this.store
			.recordCompletedAsync(completed(id, "fp-a", response(201, "{\"first\":1}"), RETENTION), this.executor)))
			.as("recorded")
			.isEmpty();
		Optional<IdempotencyRecord> first = value(this.store
			.recordCompletedAsync(completed(id, "fp-b", response(200, "{\"second\":2}"), RETENTION), this.executor));
		assertThat(first).hasValueSatisfying((record) -> {
			assertThat(record.state()).isEqualTo(RecordState.COMPLETED);
			assertThat(record.fingerprint()).isEqualTo("fp-a");
			assertThat(record.response()).isEqualTo(response(201, "{\"first\":1}"));
		});
		assertThat(value(this.store.findAsync(id, this.executor))).isEqualTo(first);

		RecordId reserved = newId();
		this.store.reserve(request(reserved, "fp-a", token(), LONG_LEASE));
		assertThat(value(this.store.recordCompletedAsync(completed(reserved, "fp-a", response(200, "{}"), RETENTION),
				this.executor)))
			.as("a live reservation is returned unchanged")
			.hasValueSatisfying((record) -> assertThat(record.state()).isEqualTo(RecordState.IN_PROGRESS));
	}

	@Test
	void asyncFindSeesNeitherAnAbsentNorAnExpiredRecord() throws Exception {
		assertThat(value(this.store.findAsync(newId(), this.executor))).isEmpty();
		RecordId expired = newId();
		this.store.reserve(request(expired, "fp-a", token(), SHORT_LEASE, SHORT_LEASE));
		elapse(SHORT_LEASE);
		assertThat(value(this.store.findAsync(expired, this.executor))).isEmpty();
		// Replaced by a live one, so that no expired record is left for the purge test.
		this.store.reserve(request(expired, "fp-a", token(), LONG_LEASE));
	}

	@Test
	void sixteenAsyncReservationsOfOneKeyAcquireItOnce() throws Exception {
		RecordId id = newId();
		List<CompletionStage<ReserveResult>> results = new ArrayList<>();
		for (int i = 0; i < 16; i++) {
			results.add(this.store.reserveAsync(request(id, "fp", token(), LONG_LEASE), this.executor));
		}
		int acquired = 0;
		for (CompletionStage<ReserveResult> result : results) {
			if (value(result) instanceof ReserveResult.Acquired) {
				acquired++;
			}
		}
		assertThat(acquired).isEqualTo(1);
	}

	@Test
	void aStoreThatFailsAnswersWithAFailedStageNotAThrownException() throws Exception {
		IdempotencyStore unreachable = createUnreachableStore();
		AtomicReference<CompletionStage<ReserveResult>> stage = new AtomicReference<>();
		assertThatCode(
				() -> stage.set(unreachable.reserveAsync(request(newId(), "fp-a", token(), LONG_LEASE), this.executor)))
			.as("the call returns a stage")
			.doesNotThrowAnyException();
		assertThat(stage.get().toCompletableFuture()).failsWithin(STAGE_TIMEOUT)
			.withThrowableOfType(ExecutionException.class)
			.havingCause()
			.isInstanceOf(IdempotencyStoreException.class);
	}

	private static <T> T value(CompletionStage<T> stage) throws Exception {
		return stage.toCompletableFuture().get(STAGE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
	}

}
