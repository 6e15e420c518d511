package dev.idempotency.core.internal;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import dev.idempotency.core.IdempotencyErrorType;
import dev.idempotency.core.IdempotencyListener;
import dev.idempotency.core.IdempotencyOutcome;
import dev.idempotency.core.IdempotencySettings;
import dev.idempotency.core.KeyFormat;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.StoredResponse;
import dev.idempotency.store.memory.InMemoryIdempotencyStore;
import dev.idempotency.store.redis.RedisIdempotencyStore;
import dev.idempotency.test.TestKeys;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.ScanOptions;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/** The engine keeps a running owner's lease alive, and stops once the owner finished. */
class IdempotencyEngineHeartbeatTests {

	private final AtomicInteger heartbeats = new AtomicInteger();

	/**
	 * A lease of 1 s beaten every 200 ms: a beat may be up to 800 ms late (a loaded
	 * machine) before the lease runs out.
	 */
	private static final Duration LEASE = Duration.ofSeconds(1);

	private final IdempotencyEngine engine = new IdempotencyEngine(InMemoryIdempotencyStore.builder()
		.clock(Clock.systemUTC())
		.maxEntries(100)
		.maxSharePerScope(1.0)
		.onFull(InMemoryIdempotencyStore.OnFull.REFUSE)
		.build(), settings(LEASE, Duration.ofMillis(200)), Clock.systemUTC(), new IdempotencyListener() {

			@Override
			public void onOutcome(IdempotencyOutcome outcome, String operation) {
			}

			@Override
			public void onStoreCall(String call, long nanos, boolean failed) {
				if (call.equals("heartbeat") && !failed) {
					IdempotencyEngineHeartbeatTests.this.heartbeats.incrementAndGet();
				}
			}

		});

	@AfterEach
	void close() {
		this.engine.close();
	}

	private IdempotentCall call(String key) {
		return new IdempotentCall("scope", List.of(key), KeyFormat.UUID_V7, false, "op", () -> "fp");
	}

	@Test
	void aRunningOwnerOutlivesItsLeaseAndStopsBeatingWhenFinished() throws Exception {
		String key = TestKeys.newKey();
		Decision first = this.engine.begin(call(key));
		Reservation reservation = ((Decision.Proceed) first).reservation();
		assertThat(reservation).isNotNull();

		Thread.sleep(LEASE.multipliedBy(3).toMillis());
		Decision duplicate = this.engine.begin(call(key));
		assertThat(duplicate).as("the lease was extended, not taken over").isInstanceOf(Decision.Reject.class);
		assertThat(((Decision.Reject) duplicate).error().type()).isEqualTo(IdempotencyErrorType.REQUEST_IN_FLIGHT);
		assertThat(this.heartbeats.get()).isGreaterThanOrEqualTo(5);

		this.engine.succeeded(reservation, new StoredResponse(201, java.util.Map.of(), new byte[] { 1 }));
		int beatsAtFinish = this.heartbeats.get();
		Thread.sleep(LEASE.toMillis());
		assertThat(this.heartbeats.get()).as("no heartbeat after the owner finished")
			.isLessThanOrEqualTo(beatsAtFinish + 1);
		assertThat(this.engine.begin(call(key))).isInstanceOf(Decision.Replay.class);
	}

	@Test
	void settingsWhoseBeatsCouldBeFurtherApartThanTheLeaseAllowsAreRefused() {
		// 11.4: lease 4s with heartbeat-interval 3.5s let a 15 s handler be taken over.
		assertThatIllegalArgumentException().isThrownBy(() -> settings(Duration.ofSeconds(4), Duration.ofMillis(3_500)))
			.withMessageContaining("heartbeatInterval (PT3.5S) must be at most half of lease (PT4S)");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> settings(Duration.ofSeconds(4), Duration.ofMillis(2_001)));
		assertThat(settings(Duration.ofSeconds(4), Duration.ofSeconds(2)).lease().heartbeatInterval())
			.isEqualTo(Duration.ofSeconds(2));
	}

	@Test
	void handlersRunningSeveralLeasesUnderTheTightestAcceptedSettingsAreNeverTakenOverInMemory() throws Exception {
		assertLongHandlersAreNeverTakenOver(InMemoryIdempotencyStore.builder()
			.clock(Clock.systemUTC())
			.maxEntries(1_000)
			.maxSharePerScope(1.0)
			.onFull(InMemoryIdempotencyStore.OnFull.REFUSE)
			.build());
	}

	@Test
	void handlersRunningSeveralLeasesUnderTheTightestAcceptedSettingsAreNeverTakenOverOnRedis() throws Exception {
		// A store a network round trip away (the real Redis at 127.0.0.1:6379), under its
		// own key prefix.
		String prefix = "idem-heartbeat-" + UUID.randomUUID() + ":";
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", 6379),
				LettuceClientConfiguration.builder().commandTimeout(Duration.ofSeconds(10)).build());
		factory.afterPropertiesSet();
		factory.start();
		try {
			assertLongHandlersAreNeverTakenOver(RedisIdempotencyStore.builder(factory, prefix).build());
		}
		finally {
			try (RedisConnection connection = factory.getConnection();
					Cursor<byte[]> keys = connection.keyCommands()
						.scan(ScanOptions.scanOptions().match(prefix + "*").count(1000).build())) {
				List<byte[]> mine = new ArrayList<>();
				keys.forEachRemaining(mine::add);
				for (byte[] key : mine) {
					connection.keyCommands().del(key);
				}
			}
			factory.destroy();
		}
	}

	/**
	 * The tightest accepted settings (heartbeat-interval exactly half the lease),
	 * handlers of two and a half leases.
	 * <p>
	 * Margins, not timing luck: beats of an owner start at most one interval apart, so a
	 * lease runs out only if the heartbeat thread (or the store) is held up for about one
	 * interval more than that. With a 1 s lease that was 500 ms, which a loaded machine
	 * (load 8 on 2 cores, Redis on the same cores) can take; with a 4 s lease it is 2 s.
	 * The ratio, which is what the test is about, is the same.
	 */
	private void assertLongHandlersAreNeverTakenOver(IdempotencyStore store) throws Exception {
		Duration lease = Duration.ofSeconds(4);
		try (IdempotencyEngine tight = new IdempotencyEngine(store, settings(lease, lease.dividedBy(2)),
				Clock.systemUTC(), IdempotencyListener.NONE)) {
			int handlers = 6;
			List<String> keys = new ArrayList<>();
			List<Reservation> owners = new ArrayList<>();
			for (int i = 0; i < handlers; i++) {
				keys.add(TestKeys.newKey());
				owners.add(((Decision.Proceed) tight.begin(call(keys.get(i)))).reservation());
			}
			AtomicInteger takenOver = new AtomicInteger();
			AtomicInteger duplicates = new AtomicInteger();
			long end = System.nanoTime() + lease.multipliedBy(5).dividedBy(2).toNanos();
			ExecutorService retries = Executors.newFixedThreadPool(handlers);
			try {
				List<Future<?>> running = new ArrayList<>();
				for (String key : keys) {
					running.add(retries.submit(() -> {
						while (System.nanoTime() - end < 0) {
							Decision retry = tight.begin(call(key));
							duplicates.incrementAndGet();
							if (retry instanceof Decision.Proceed) {
								takenOver.incrementAndGet();
							}
							Thread.sleep(20);
						}
						return null;
					}));
				}
				for (Future<?> each : running) {
					each.get(60, TimeUnit.SECONDS);
				}
			}
			finally {
				retries.shutdownNow();
			}
			assertThat(duplicates.get()).isGreaterThan(handlers * 10);
			assertThat(takenOver.get()).as("retries that took a live owner's record over").isZero();
			for (Reservation owner : owners) {
				tight.succeeded(owner, new StoredResponse(201, java.util.Map.of(), new byte[] { 1 }));
			}
			for (String key : keys) {
				assertThat(tight.begin(call(key))).isInstanceOf(Decision.Replay.class);
			}
		}
	}

	private static IdempotencySettings settings(Duration lease, Duration heartbeatInterval) {
		return IdempotencySettings.builder()
			.lease(lease)
			.heartbeatInterval(heartbeatInterval)
			.inFlightWait(Duration.ZERO)
			.inFlightPollInterval(Duration.ofMillis(10))
			.maxBodyBytes(1024)
			.build();
	}

	@Test
	void anOwnerThatStopsBeatingIsTakenOverAfterItsLease() throws Exception {
		String key = TestKeys.newKey();
		Reservation abandoned = ((Decision.Proceed) this.engine.begin(call(key))).reservation();
		// Simulates a crashed owner: finished without writing, so its heartbeat stops and
		// the record stays.
		assertThat(abandoned.finish()).isTrue();
		Thread.sleep(LEASE.multipliedBy(3).dividedBy(2).toMillis());
		Decision retry = this.engine.begin(call(key));
		assertThat(retry).isInstanceOf(Decision.Proceed.class);
		assertThat(((Decision.Proceed) retry).reservation().takenOver()).isTrue();
	}

}
