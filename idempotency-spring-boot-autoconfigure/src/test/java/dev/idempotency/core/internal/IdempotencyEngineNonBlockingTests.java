package dev.idempotency.core.internal;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.Optional;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.IntStream;

import dev.idempotency.core.ExecutionResult;
import dev.idempotency.core.IdempotencyListener;
import dev.idempotency.core.IdempotencyOutcome;
import dev.idempotency.core.IdempotencySettings;
import dev.idempotency.core.KeyFormat;
import dev.idempotency.store.CompletedRecordRequest;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.ReserveRequest;
import dev.idempotency.store.ReserveResult;
import dev.idempotency.store.StoredResponse;
import dev.idempotency.store.memory.InMemoryIdempotencyStore;
import dev.idempotency.test.TestKeys;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The engine's non-blocking path with real racing calls on the in-memory store (whose
 * calls do not block, so no executor is used): a call that waits for a run of the same
 * request in flight holds no thread while it waits, and gets that run's answer once it is
 * stored, or the in-flight refusal once its wait is over. And the whole run, its end
 * included, on a store with a non-blocking client of its own: never one blocking call.
 */
class IdempotencyEngineNonBlockingTests {

	/** A non-blocking store is called on the caller's thread: no executor is used. */
	private static final Executor NO_EXECUTOR = (task) -> {
		throw new AssertionError("the in-memory store's calls need no executor");
	};

	private final InMemoryIdempotencyStore store = InMemoryIdempotencyStore.builder().build();

	private IdempotencyEngine engine = engine(Duration.ofSeconds(30));

	@AfterEach
	void close() {
		this.engine.close();
	}

	@Test
	void callsWaitingForARunInFlightHoldNoThreadAndAreReplayedItsAnswerOnceStored() {
		String key = TestKeys.newKey();
		Decision first = this.engine.beginAsync(call(key), false, NO_EXECUTOR).join();
		assertThat(first).isInstanceOf(Decision.Proceed.class);
		Reservation owner = ((Decision.Proceed) first).reservation();
		assertThat(owner).isNotNull();

		// 500 duplicates begun on this one thread while the first runs: each call returns
		// at once, with its answer to come (a blocking wait would have held this thread
		// for up to 30 s per call).
		List<CompletableFuture<Decision>> duplicates = IntStream.range(0, 500)
			.mapToObj((i) -> this.engine.beginAsync(call(key), false, NO_EXECUTOR))
			.toList();
		assertThat(duplicates).noneMatch(CompletableFuture::isDone);

		StoredResponse created = new StoredResponse(201, Map.of("Location", List.of("/orders/1")),
				"{\"id\":1}".getBytes(StandardCharsets.UTF_8));
		this.engine.succeeded(owner, created);

		CompletableFuture.allOf(duplicates.toArray(CompletableFuture[]::new)).orTimeout(20, TimeUnit.SECONDS).join();
		assertThat(duplicates).allSatisfy((duplicate) -> {
			assertThat(duplicate.join()).isInstanceOf(Decision.Replay.class);
			StoredResponse replayed = ((Decision.Replay) duplicate.join()).response();
			assertThat(replayed.status()).isEqualTo(201);
			assertThat(replayed.body()).isEqualTo(created.body());
		});
	}

	@Test
	void aCallWhoseWaitEndsWhileTheRunGoesOnIsAnsweredInFlight() {
		this.engine.close();
		this.engine = engine(Duration.ofMillis(300));
		String key = TestKeys.newKey();
		assertThat(this.engine.beginAsync(call(key), false, NO_EXECUTOR).join()).isInstanceOf(Decision.Proceed.class);

		CompletableFuture<Decision> duplicate = this.engine.beginAsync(call(key), false, NO_EXECUTOR);
		assertThat(duplicate).isNotDone();
		Decision decision = duplicate.orTimeout(20, TimeUnit.SECONDS).join();
		assertThat(decision).isInstanceOf(Decision.Reject.class);
		assertThat(((Decision.Reject) decision).error().status()).isEqualTo(409);
	}

	@Test
	void anotherRequestUnderTheKeyIsRefusedAtOnce() {
		String key = TestKeys.newKey();
		assertThat(this.engine.beginAsync(call(key), false, NO_EXECUTOR).join()).isInstanceOf(Decision.Proceed.class);
		CompletableFuture<Decision> other = this.engine.beginAsync(
				new IdempotentCall("scope", List.of(key), KeyFormat.UUID_V7, false, "op", () -> "another"), false,
				NO_EXECUTOR);
		assertThat(other).isDone();
		assertThat(((Decision.Reject) other.join()).error().status()).isEqualTo(422);
	}

	/**
	 * Every way a run ends that writes, on a store whose non-blocking calls answer later
	 * on its own I/O thread (as Redis through Lettuce's async API) and whose blocking
	 * calls fail: the caller is never held, the store is never called blocking, and what
	 * was stored is what a retry sees.
	 */
	@ParameterizedTest(name = "{0}")
	@EnumSource(NonBlockingEnd.class)
	void aRunEndsOnANonBlockingStoreWithoutOneBlockingCall(NonBlockingEnd end) {
		this.engine.close();
		LaterStore later = new LaterStore(this.store);
		List<ExecutionResult> results = new CopyOnWriteArrayList<>();
		this.engine = new IdempotencyEngine(later, settings(end.mode, Duration.ofSeconds(30)), Clock.systemUTC(),
				new IdempotencyListener() {

					@Override
					public void onOutcome(IdempotencyOutcome outcome, String operation) {
					}

					@Override
					public void onExecutionFinished(ExecutionResult result, String operation) {
						results.add(result);
					}

				});
		try {
			String key = TestKeys.newKey();
			Reservation run = ((Decision.Proceed) this.engine.beginAsync(call(key), false, NO_EXECUTOR)
				.orTimeout(10, TimeUnit.SECONDS)
				.join()).reservation();
			assertThat(run).isNotNull();

			CompletableFuture<?> finished = end.finish(this.engine, run);
			assertThat(finished).as("the caller is not held while the store answers").isNotDone();
			finished.orTimeout(10, TimeUnit.SECONDS).join();
			assertThat(results).containsExactly(end.result);

			Decision retry = this.engine.beginAsync(call(key), false, NO_EXECUTOR)
				.orTimeout(10, TimeUnit.SECONDS)
				.join();
			if (end.stored) {
				assertThat(retry).isInstanceOf(Decision.Replay.class);
				assertThat(((Decision.Replay) retry).response().status()).isEqualTo(201);
			}
			else {
				assertThat(retry).isInstanceOf(Decision.Proceed.class);
			}
			assertThat(later.blockingCalls).as("blocking calls of the non-blocking store").isEmpty();
		}
		finally {
			later.close();
		}
	}

	enum NonBlockingEnd {

		LEASE_SUCCESS(IdempotencySettings.Mode.LEASE, ExecutionResult.COMPLETED, true) {
			@Override
			CompletableFuture<?> finish(IdempotencyEngine engine, Reservation run) {
				return engine.succeededAsync(run, created(), NO_EXECUTOR);
			}
		},
		LEASE_NOT_FINAL(IdempotencySettings.Mode.LEASE, ExecutionResult.RELEASED, false) {
			@Override
			CompletableFuture<?> finish(IdempotencyEngine engine, Reservation run) {
				return engine.succeededAsync(run, new StoredResponse(503, Map.of(), new byte[0]), NO_EXECUTOR);
			}
		},
		LEASE_FAILED(IdempotencySettings.Mode.LEASE, ExecutionResult.RELEASED, false) {
			@Override
			CompletableFuture<?> finish(IdempotencyEngine engine, Reservation run) {
				return engine.failedAsync(run, "the handler threw", new IllegalStateException("boom"), NO_EXECUTOR);
			}
		},
		LEASE_TOO_LARGE(IdempotencySettings.Mode.LEASE, ExecutionResult.BODY_TOO_LARGE, false) {
			@Override
			CompletableFuture<?> finish(IdempotencyEngine engine, Reservation run) {
				return engine.responseTooLargeAsync(run, 10_000_000, NO_EXECUTOR);
			}
		},
		RECORD_AFTER_SUCCESS_SUCCESS(IdempotencySettings.Mode.RECORD_AFTER_SUCCESS, ExecutionResult.COMPLETED, true) {
			@Override
			CompletableFuture<?> finish(IdempotencyEngine engine, Reservation run) {
				return engine.succeededAsync(run, created(), NO_EXECUTOR);
			}
		},
		RECORD_AFTER_SUCCESS_REFUSAL(IdempotencySettings.Mode.RECORD_AFTER_SUCCESS, ExecutionResult.RELEASED, false) {
			@Override
			CompletableFuture<?> finish(IdempotencyEngine engine, Reservation run) {
				return engine.succeededAsync(run, new StoredResponse(409, Map.of(), new byte[0]), NO_EXECUTOR);
			}
		};

		private final IdempotencySettings.Mode mode;

		private final ExecutionResult result;

		/** Whether a retry finds the run's answer stored. */
		private final boolean stored;

		NonBlockingEnd(IdempotencySettings.Mode mode, ExecutionResult result, boolean stored) {
			this.mode = mode;
			this.result = result;
			this.stored = stored;
		}

		abstract CompletableFuture<?> finish(IdempotencyEngine engine, Reservation run);

		private static StoredResponse created() {
			return new StoredResponse(201, Map.of("Location", List.of("/orders/1")),
					"{\"id\":1}".getBytes(StandardCharsets.UTF_8));
		}

	}

	/**
	 * A store with a non-blocking client of its own: each non-blocking call answers
	 * later, on the store's own I/O thread; each blocking call (but the heartbeat's, on
	 * its own thread) is noted and fails.
	 */
	static final class LaterStore implements IdempotencyStore, AutoCloseable {

		private final InMemoryIdempotencyStore records;

		private final ExecutorService io = Executors.newSingleThreadExecutor((task) -> new Thread(task, "store-io"));

		final List<String> blockingCalls = new CopyOnWriteArrayList<>();

		LaterStore(InMemoryIdempotencyStore records) {
			this.records = records;
		}

		private <T> CompletionStage<T> later(Supplier<T> call) {
			return CompletableFuture.supplyAsync(call,
					CompletableFuture.delayedExecutor(50, TimeUnit.MILLISECONDS, this.io));
		}

		private <T> T blocking(String call) {
			this.blockingCalls.add(call);
			throw new IllegalStateException("blocking " + call + " of a non-blocking store");
		}

		@Override
		public boolean isBlocking() {
			return false;
		}

		@Override
		public CompletionStage<ReserveResult> reserveAsync(ReserveRequest request, Executor executor) {
			return later(() -> this.records.reserve(request));
		}

		@Override
		public CompletionStage<Optional<IdempotencyRecord>> findAsync(RecordId id, Executor executor) {
			return later(() -> this.records.find(id));
		}

		@Override
		public CompletionStage<Boolean> completeAsync(RecordId id, String ownerToken, StoredResponse response,
				Executor executor) {
			return later(() -> this.records.complete(id, ownerToken, response));
		}

		@Override
		public CompletionStage<Boolean> releaseAsync(RecordId id, String ownerToken, Executor executor) {
			return later(() -> this.records.release(id, ownerToken));
		}

		@Override
		public CompletionStage<Optional<IdempotencyRecord>> recordCompletedAsync(CompletedRecordRequest request,
				Executor executor) {
			return later(() -> this.records.recordCompleted(request));
		}

		@Override
		public ReserveResult reserve(ReserveRequest request) {
			return blocking("reserve");
		}

		@Override
		public Optional<IdempotencyRecord> find(RecordId id) {
			return blocking("find");
		}

		@Override
		public boolean complete(RecordId id, String ownerToken, StoredResponse response) {
			return blocking("complete");
		}

		@Override
		public boolean release(RecordId id, String ownerToken) {
			return blocking("release");
		}

		@Override
		public Optional<IdempotencyRecord> recordCompleted(CompletedRecordRequest request) {
			return blocking("recordCompleted");
		}

		@Override
		public boolean heartbeat(RecordId id, String ownerToken, Duration lease) {
			return this.records.heartbeat(id, ownerToken, lease);
		}

		@Override
		public int purgeExpired(int maxRecords) {
			return this.records.purgeExpired(maxRecords);
		}

		@Override
		public String name() {
			return "later";
		}

		@Override
		public void close() {
			this.io.shutdownNow();
		}

	}

	private IdempotencyEngine engine(Duration inFlightWait) {
		return new IdempotencyEngine(this.store, settings(IdempotencySettings.Mode.LEASE, inFlightWait),
				Clock.systemUTC(), (outcome, operation) -> {
				});
	}

	private static IdempotencySettings settings(IdempotencySettings.Mode mode, Duration inFlightWait) {
		return IdempotencySettings.builder()
			.mode(mode)
			.inFlightWait(inFlightWait)
			.inFlightPollInterval(Duration.ofMillis(20))
			.build();
	}

	private static IdempotentCall call(String key) {
		return new IdempotentCall("scope", List.of(key), KeyFormat.UUID_V7, false, "op", () -> "fp");
	}

}
