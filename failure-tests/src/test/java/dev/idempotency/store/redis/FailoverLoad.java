package dev.idempotency.store.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;

import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStoreException;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.RecordState;
import dev.idempotency.store.ReserveRequest;
import dev.idempotency.store.ReserveResult;
import dev.idempotency.store.StoredResponse;

/**
 * Threads that reserve and complete new records on a store until stopped, recording every
 * call: when it started and ended, whether it failed, and whether its record lives on the
 * server a failover test kills. The records whose completion the store acknowledged are
 * kept, so that the test can count those a failover lost.
 */
final class FailoverLoad implements AutoCloseable {

	private static final StoredResponse RESPONSE = new StoredResponse(201, Map.of(), "{}".getBytes());

	private final Queue<Call> calls = new ConcurrentLinkedQueue<>();

	private final Set<RecordId> acknowledged = ConcurrentHashMap.newKeySet();

	private final Queue<Throwable> unexpected = new ConcurrentLinkedQueue<>();

	private final AtomicBoolean stop = new AtomicBoolean();

	private final List<Thread> workers = new ArrayList<>();

	/** The first few failures of the store, distinct, to say why calls failed. */
	private final Set<String> failures = ConcurrentHashMap.newKeySet();

	private final RedisIdempotencyStore store;

	FailoverLoad(RedisIdempotencyStore store, int threads, Predicate<String> onVictim) {
		this.store = store;
		for (int i = 0; i < threads; i++) {
			Thread worker = new Thread(() -> work(onVictim), "failover-worker-" + i);
			worker.start();
			this.workers.add(worker);
		}
	}

	private void work(Predicate<String> onVictim) {
		while (!this.stop.get()) {
			RecordId id = new RecordId("failover", UUID.randomUUID().toString());
			boolean victim = onVictim.test(this.store.key(id));
			String owner = UUID.randomUUID().toString();
			long started = System.nanoTime();
			try {
				ReserveResult reserved = this.store
					.reserve(new ReserveRequest(id, "fp", "op", owner, Duration.ofMinutes(1), Duration.ofMinutes(10)));
				if (reserved instanceof ReserveResult.Acquired && this.store.complete(id, owner, RESPONSE)) {
					this.acknowledged.add(id);
				}
				this.calls.add(new Call(started, System.nanoTime(), victim, true));
			}
			catch (IdempotencyStoreException ex) {
				this.calls.add(new Call(started, System.nanoTime(), victim, false));
				if (this.failures.size() < 5) {
					this.failures.add(describe(ex));
				}
			}
			catch (RuntimeException ex) {
				this.unexpected.add(ex);
			}
		}
	}

	/**
	 * Waits until the load has run for {@code atLeast} and at least 100 completions were
	 * acknowledged, at most {@code within}: the kill must come after the load has
	 * succeeded, and on a loaded machine the store's first connection can take longer to
	 * open than the load's warm-up (a CI run saw every call of the first 1.5 s fail so).
	 * @throws IllegalStateException if nothing was acknowledged within that time
	 */
	void awaitRunning(Duration atLeast, Duration within) throws InterruptedException {
		long started = System.nanoTime();
		long deadline = started + within.toNanos();
		while (System.nanoTime() - started < atLeast.toNanos()
				|| (this.acknowledged.size() < 100 && System.nanoTime() < deadline)) {
			Thread.sleep(50);
		}
		if (this.acknowledged.isEmpty()) {
			throw new IllegalStateException("no completion acknowledged within " + within
					+ " before the kill; failures seen: " + this.failures);
		}
	}

	/**
	 * Waits until a call on the victim's records that started after {@code nanos}
	 * succeeds; its end, or 0.
	 */
	long awaitVictimSuccessStartedAfter(long nanos, long deadline) throws InterruptedException {
		while (System.nanoTime() < deadline) {
			Optional<Call> success = this.calls.stream()
				.filter((call) -> call.onVictim && call.succeeded && call.started > nanos)
				.findFirst();
			if (success.isPresent()) {
				return success.get().ended;
			}
			Thread.sleep(50);
		}
		return 0;
	}

	/**
	 * Stops the threads and sums up; {@code killedAt} and the other instants are
	 * {@link System#nanoTime()}.
	 */
	Result finish(int replicasToAck, long killedAt, long promotedAt, long recoveredAt) throws InterruptedException {
		close();
		int lost = 0;
		for (RecordId id : this.acknowledged) {
			Optional<IdempotencyRecord> record = this.store.find(id);
			if (record.isEmpty() || record.get().state() != RecordState.COMPLETED) {
				lost++;
			}
		}
		List<Call> failed = this.calls.stream().filter((call) -> !call.succeeded).toList();
		long firstFailure = failed.stream().mapToLong(Call::started).min().orElse(killedAt);
		long lastFailure = failed.stream().mapToLong(Call::ended).max().orElse(killedAt);
		return new Result(replicasToAck, this.calls.size(), failed.size(),
				(int) failed.stream().filter(Call::onVictim).count(), millis(lastFailure - firstFailure),
				millis(promotedAt - killedAt), (recoveredAt > 0) ? millis(recoveredAt - killedAt) : -1,
				this.acknowledged.size(), lost, List.copyOf(this.unexpected), List.copyOf(this.failures));
	}

	@Override
	public void close() throws InterruptedException {
		this.stop.set(true);
		for (Thread worker : this.workers) {
			worker.join(10_000);
		}
	}

	private static String describe(Throwable failure) {
		StringBuilder text = new StringBuilder();
		for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
			text.append((text.length() > 0) ? " <- " : "")
				.append(cause.getClass().getSimpleName())
				.append(": ")
				.append(cause.getMessage());
		}
		return text.toString();
	}

	private static long millis(long nanos) {
		return Duration.ofNanos(nanos).toMillis();
	}

	private record Call(long started, long ended, boolean onVictim, boolean succeeded) {
	}

	record Result(int replicasToAck, int calls, int failed, int failedOnVictim, long failureWindowMillis,
			long promotedMillis, long recoveredMillis, int acknowledged, int lost, List<Throwable> unexpected,
			List<String> failures) {

		@Override
		public String toString() {
			return String.format(
					"replicas-to-ack=%d: %d calls, %d failed (%d on the killed primary's records), failures for %d ms,"
							+ " replica promoted %d ms after the kill, its records written again %d ms after the kill,"
							+ " %d completions acknowledged, %d lost, %d unexpected failures; failures seen: %s",
					this.replicasToAck, this.calls, this.failed, this.failedOnVictim, this.failureWindowMillis,
					this.promotedMillis, this.recoveredMillis, this.acknowledged, this.lost, this.unexpected.size(),
					this.failures);
		}

	}

}
