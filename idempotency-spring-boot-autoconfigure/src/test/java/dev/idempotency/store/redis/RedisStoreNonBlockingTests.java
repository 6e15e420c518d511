package dev.idempotency.store.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import dev.idempotency.NonBlockingThreads;
import dev.idempotency.store.CompletedRecordRequest;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.RecordState;
import dev.idempotency.store.ReserveRequest;
import dev.idempotency.store.ReserveResult;
import dev.idempotency.store.StoredResponse;
import dev.idempotency.test.servers.RedisCluster;
import dev.idempotency.test.servers.SharedRedis;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The Redis store's {@code *Async} methods never block their caller: each is called from
 * a thread of Reactor's parallel scheduler, where any blocking call fails the test
 * ({@link NonBlockingThreads}), with an executor that runs its task on that same thread,
 * so that a store that ran its blocking call on the executor given would be caught too.
 * On standalone Redis and on Redis Cluster, each store under a key prefix of its own.
 */
@ExtendWith(NonBlockingThreads.class)
class RedisStoreNonBlockingTests {

	private static final Duration TIMEOUT = Duration.ofSeconds(10);

	/** Runs a task on the caller's thread: a parallel one here. */
	private static final Executor CALLERS_THREAD = Runnable::run;

	enum Topology {

		STANDALONE, CLUSTER

	}

	private final String prefix = "idem-nonblocking-" + UUID.randomUUID() + ":";

	private LettuceConnectionFactory factory;

	@AfterEach
	void cleanUp() {
		if (this.factory != null) {
			this.factory.destroy();
		}
		// the shared cluster is this run's own and is thrown away when the JVM exits
		SharedRedis.deleteKeys(this.prefix);
	}

	private RedisIdempotencyStore store(Topology topology) {
		if (topology == Topology.CLUSTER) {
			this.factory = RedisCluster.shared().connectionFactory(TIMEOUT);
		}
		else {
			this.factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration("127.0.0.1", 6379),
					LettuceClientConfiguration.builder().commandTimeout(TIMEOUT).build());
			this.factory.afterPropertiesSet();
			this.factory.start();
		}
		return RedisIdempotencyStore.builder(this.factory, this.prefix).build();
	}

	@ParameterizedTest
	@EnumSource(Topology.class)
	void everyAsyncTransitionRunsWithoutBlockingItsCaller(Topology topology) {
		RedisIdempotencyStore store = store(topology);
		RecordId id = new RecordId("nonblocking", UUID.randomUUID().toString());
		// the connection is opened once, by a blocking call on this thread
		assertThat(store.find(id)).isEmpty();
		String owner = UUID.randomUUID().toString();
		String other = UUID.randomUUID().toString();

		assertThat(onParallel(() -> store.reserveAsync(reserve(id, owner), CALLERS_THREAD)))
			.isEqualTo(new ReserveResult.Acquired(false));
		assertThat(onParallel(() -> store.reserveAsync(reserve(id, other), CALLERS_THREAD)))
			.isInstanceOf(ReserveResult.Existing.class);
		assertThat(onParallel(() -> store.findAsync(id, CALLERS_THREAD)))
			.hasValueSatisfying((record) -> assertThat(record.state()).isEqualTo(RecordState.IN_PROGRESS));
		assertThat(onParallel(() -> store.completeAsync(id, other, response(), CALLERS_THREAD))).isFalse();
		assertThat(onParallel(() -> store.completeAsync(id, owner, response(), CALLERS_THREAD))).isTrue();
		assertThat(onParallel(() -> store.releaseAsync(id, owner, CALLERS_THREAD))).isFalse();
		RecordId recorded = new RecordId("nonblocking", UUID.randomUUID().toString());
		assertThat(onParallel(() -> store.recordCompletedAsync(completed(recorded), CALLERS_THREAD))).isEmpty();
		Optional<IdempotencyRecord> present = onParallel(
				() -> store.recordCompletedAsync(completed(recorded), CALLERS_THREAD));
		assertThat(present).hasValueSatisfying((record) -> assertThat(record.state()).isEqualTo(RecordState.COMPLETED));
		RecordId released = new RecordId("nonblocking", UUID.randomUUID().toString());
		store.reserve(reserve(released, owner));
		assertThat(onParallel(() -> store.releaseAsync(released, owner, CALLERS_THREAD))).isTrue();
	}

	@ParameterizedTest
	@EnumSource(Topology.class)
	void aConnectionNotOpenYetIsOpenedOnTheExecutorGivenNotOnTheCallersThread(Topology topology) {
		RedisIdempotencyStore store = store(topology);
		AtomicInteger offloaded = new AtomicInteger();
		Executor boundedElastic = (task) -> {
			offloaded.incrementAndGet();
			Schedulers.boundedElastic().schedule(task);
		};
		RecordId id = new RecordId("nonblocking", UUID.randomUUID().toString());
		assertThat(onParallel(() -> store.findAsync(id, boundedElastic))).isEmpty();
		assertThat(offloaded).as("the connection opened once, off the caller's thread").hasValue(1);
		assertThat(onParallel(() -> store.findAsync(id, boundedElastic))).isEmpty();
		assertThat(offloaded).as("then no call leaves the caller's thread").hasValue(1);
	}

	/**
	 * BlockHound is on where the calls above run: a thread that sleeps there is caught.
	 * (A blocking store call is not a sure canary: one whose reply is in before it waits
	 * never parks.)
	 */
	@Test
	void blockingOnAParallelThreadIsCaught() {
		NonBlockingThreads.assertBlockingIsDetected();
	}

	@AfterEach
	void nothingBlocked() {
		NonBlockingThreads.assertNoneBlocked();
	}

	private static <T> T onParallel(Supplier<CompletionStage<T>> call) {
		return Mono.fromCompletionStage(call).subscribeOn(Schedulers.parallel()).block(TIMEOUT);
	}

	private static ReserveRequest reserve(RecordId id, String owner) {
		return new ReserveRequest(id, "fp", "op", owner, Duration.ofMinutes(1), Duration.ofMinutes(10));
	}

	private static CompletedRecordRequest completed(RecordId id) {
		return new CompletedRecordRequest(id, "fp", "op", response(), Duration.ofMinutes(10));
	}

	private static StoredResponse response() {
		return new StoredResponse(201, Map.of("Content-Type", List.of("application/json")),
				"{}".getBytes(StandardCharsets.UTF_8));
	}

}
