package dev.idempotency.core.internal;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import dev.idempotency.core.IdempotencySettings;
import dev.idempotency.core.KeyFormat;
import dev.idempotency.store.StoredResponse;
import dev.idempotency.store.memory.InMemoryIdempotencyStore;
import dev.idempotency.test.TestKeys;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The engine's non-blocking path with real racing calls on the in-memory store (whose
 * calls do not block, so no executor is used): a call that waits for a run of the same
 * request in flight holds no thread while it waits, and gets that run's answer once it is
 * stored, or the in-flight refusal once its wait is over.
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

	private IdempotencyEngine engine(Duration inFlightWait) {
		IdempotencySettings settings = IdempotencySettings.builder()
			.inFlightWait(inFlightWait)
			.inFlightPollInterval(Duration.ofMillis(20))
			.build();
		return new IdempotencyEngine(this.store, settings, Clock.systemUTC(), (outcome, operation) -> {
		});
	}

	private static IdempotentCall call(String key) {
		return new IdempotentCall("scope", List.of(key), KeyFormat.UUID_V7, false, "op", () -> "fp");
	}

}
