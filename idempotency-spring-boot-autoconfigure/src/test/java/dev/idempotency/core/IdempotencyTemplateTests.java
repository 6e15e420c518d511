package dev.idempotency.core;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.idempotency.core.internal.IdempotencyEngine;
import dev.idempotency.core.internal.IdempotentCall;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.StoredResponse;
import dev.idempotency.store.StoredResponseCodec;
import dev.idempotency.store.seal.Sealing;
import dev.idempotency.store.seal.SealingKeys;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * {@link IdempotencyTemplate} as an application calls it, on each store a subclass names:
 * the first call runs, a retry gets its result without running, another request under the
 * same key and a call while the first still runs are refused, a failed call leaves the
 * key free.
 */
abstract class IdempotencyTemplateTests {

	private final AtomicInteger runs = new AtomicInteger();

	private IdempotencyTemplate template;

	/** The store under test, empty of the keys these tests use (they are random). */
	protected abstract IdempotencyStore store();

	@BeforeEach
	void buildTemplate() {
		// One instance may serve every test (a subclass's lifecycle).
		this.runs.set(0);
		IdempotencySettings settings = IdempotencySettings.builder()
			.inFlightWait(Duration.ofMillis(200))
			.inFlightPollInterval(Duration.ofMillis(20))
			.build();
		this.template = IdempotencyTemplate.builder(store()).settings(settings).build();
	}

	@AfterEach
	void closeTemplate() {
		this.template.close();
	}

	@Test
	void theFirstCallRunsAndReturnsItsResult() {
		String result = this.template.execute(request(newKey(), "order-1"), ResultCodec.utf8(), () -> run("placed"));
		assertThat(result).isEqualTo("placed #1");
		assertThat(this.runs).hasValue(1);
	}

	@Test
	void aRetryReturnsTheStoredResultWithoutRunning() {
		String key = newKey();
		String first = this.template.execute(request(key, "order-1"), ResultCodec.utf8(), () -> run("placed"));
		String retry = this.template.execute(request(key, "order-1"), ResultCodec.utf8(), () -> run("placed"));
		assertThat(retry).isEqualTo(first).isEqualTo("placed #1");
		assertThat(this.runs).hasValue(1);
	}

	@Test
	void theSameKeyWithAnotherRequestIsRefusedWithoutRunning() {
		String key = newKey();
		this.template.execute(request(key, "order-1"), ResultCodec.utf8(), () -> run("placed"));
		assertThatExceptionOfType(IdempotencyErrorException.class)
			.isThrownBy(() -> this.template.execute(request(key, "order-2"), ResultCodec.utf8(), () -> run("placed")))
			.satisfies((ex) -> {
				assertThat(ex.error().type()).isEqualTo(IdempotencyErrorType.KEY_REUSED);
				assertThat(ex.error().status()).isEqualTo(422);
			});
		assertThat(this.runs).hasValue(1);
	}

	@Test
	void theSameKeyInAnotherScopeIsAnotherKey() {
		String key = newKey();
		String mine = this.template.execute(request(key, "order-1").inScope("tenant-a"), ResultCodec.utf8(),
				() -> run("placed"));
		String theirs = this.template.execute(request(key, "order-1").inScope("tenant-b"), ResultCodec.utf8(),
				() -> run("placed"));
		assertThat(mine).isEqualTo("placed #1");
		assertThat(theirs).isEqualTo("placed #2");
	}

	@Test
	void aCallWhileTheFirstStillRunsIsRefusedAsInFlightAndItsRetryGetsTheResult() throws Exception {
		String key = newKey();
		CountDownLatch started = new CountDownLatch(1);
		CountDownLatch finish = new CountDownLatch(1);
		ExecutorService executor = Executors.newSingleThreadExecutor();
		try {
			Future<String> first = executor
				.submit(() -> this.template.execute(request(key, "order-1"), ResultCodec.utf8(), () -> {
					started.countDown();
					assertThat(finish.await(10, TimeUnit.SECONDS)).isTrue();
					return run("placed");
				}));
			assertThat(started.await(10, TimeUnit.SECONDS)).isTrue();
			assertThatExceptionOfType(IdempotencyErrorException.class)
				.isThrownBy(
						() -> this.template.execute(request(key, "order-1"), ResultCodec.utf8(), () -> run("placed")))
				.satisfies((ex) -> {
					assertThat(ex.error().type()).isEqualTo(IdempotencyErrorType.REQUEST_IN_FLIGHT);
					assertThat(ex.error().status()).isEqualTo(409);
					assertThat(ex.error().retryAfter()).isNotNull();
				});
			finish.countDown();
			assertThat(first.get(10, TimeUnit.SECONDS)).isEqualTo("placed #1");
		}
		finally {
			finish.countDown();
			executor.shutdownNow();
		}
		assertThat(this.template.execute(request(key, "order-1"), ResultCodec.utf8(), () -> run("placed")))
			.isEqualTo("placed #1");
		assertThat(this.runs).hasValue(1);
	}

	@Test
	void aCallbackThatThrowsStoresNothingAndItsRetryRuns() {
		String key = newKey();
		assertThatExceptionOfType(Exception.class)
			.isThrownBy(() -> this.template.execute(request(key, "order-1"), ResultCodec.utf8(), () -> {
				throw new Exception("the warehouse is closed");
			}))
			.withMessage("the warehouse is closed");
		String retry = this.template.execute(request(key, "order-1"), ResultCodec.utf8(), () -> run("placed"));
		assertThat(retry).isEqualTo("placed #1");
	}

	@Test
	void aResultThatDoesNotDecodeIsNotStoredAndItsKeyIsReleased() {
		String key = newKey();
		ResultCodec<String> oneWay = new ResultCodec<>() {

			@Override
			public byte[] encode(String result) {
				return result.getBytes(StandardCharsets.UTF_8);
			}

			@Override
			public String decode(byte[] stored) {
				throw new IllegalArgumentException("cannot read " + stored.length + " bytes");
			}

		};
		assertThatIllegalStateException()
			.isThrownBy(() -> this.template.execute(request(key, "order-1"), oneWay, () -> run("placed")))
			.withMessageContaining("not stored");
		assertThat(this.template.execute(request(key, "order-1"), ResultCodec.utf8(), () -> run("placed")))
			.isEqualTo("placed #2");
	}

	@Test
	void aMalformedKeyIsRefused() {
		assertThatExceptionOfType(IdempotencyErrorException.class)
			.isThrownBy(() -> this.template.execute(request("not a uuid", "order-1").withKeyFormat(KeyFormat.UUID),
					ResultCodec.utf8(), () -> run("placed")))
			.satisfies((ex) -> assertThat(ex.error().type()).isEqualTo(IdempotencyErrorType.INVALID_KEY));
		assertThat(this.runs).hasValue(0);
	}

	/**
	 * Sealed results: replayed, kept sealed by the store, and refused (500, without
	 * running) by a template whose keys do not open them.
	 */
	@Test
	void aSealedResultIsReplayedAndOneThatFailsItsIntegrityCheckIsRefusedWithoutRunning() {
		String key = newKey();
		try (IdempotencyTemplate sealing = IdempotencyTemplate.builder(store()).sealing(sealing("k1")).build()) {
			String first = sealing.execute(request(key, "order-1"), ResultCodec.utf8(), () -> run("placed for alice"));
			assertThat(sealing.execute(request(key, "order-1"), ResultCodec.utf8(), () -> run("placed")))
				.isEqualTo(first)
				.isEqualTo("placed for alice #1");
		}
		StoredResponse stored = store().find(IdempotencyEngine.recordId("", key, IdempotentCall.Door.METHOD))
			.orElseThrow()
			.completedResponse();
		assertThat(StoredResponseCodec.isSealed(stored)).isTrue();
		assertThat(new String(stored.body(), StandardCharsets.ISO_8859_1)).doesNotContain("alice");
		try (IdempotencyTemplate otherKey = IdempotencyTemplate.builder(store()).sealing(sealing("k2")).build()) {
			assertThatExceptionOfType(IdempotencyErrorException.class)
				.isThrownBy(() -> otherKey.execute(request(key, "order-1"), ResultCodec.utf8(), () -> run("placed")))
				.satisfies((ex) -> {
					assertThat(ex.error().type()).isEqualTo(IdempotencyErrorType.INTEGRITY_CHECK_FAILED);
					assertThat(ex.error().status()).isEqualTo(500);
				});
		}
		assertThat(this.runs).hasValue(1);
	}

	private static Sealing sealing(String keyId) {
		byte[] key = new byte[32];
		Arrays.fill(key, (byte) keyId.hashCode());
		return Sealing.of(SealingKeys.of(Map.of(keyId, key), keyId), false);
	}

	private String run(String what) {
		return what + " #" + this.runs.incrementAndGet();
	}

	private static IdempotentRequest request(String key, String body) {
		return IdempotentRequest.of(key, "placeOrder", body.getBytes(StandardCharsets.UTF_8));
	}

	private static String newKey() {
		return "template-" + UUID.randomUUID();
	}

}
