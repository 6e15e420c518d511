package dev.idempotency.store.redis;

import java.time.Duration;
import java.util.UUID;

import dev.idempotency.test.servers.RedisSentinelGroup;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The failover of {@link RedisClusterFailoverTests} through Redis Sentinel: a primary,
 * one replica and three Sentinels ({@link RedisSentinelGroup}), the store connected with
 * Spring Data Redis's {@code RedisSentinelConfiguration} (Lettuce). Eight threads reserve
 * and complete records (all on the one primary) while the primary is killed with SIGKILL;
 * the Sentinels promote the replica. The default run does one failover with
 * {@code replicas-to-ack=1} (the killed server is started again as a replica of the
 * promoted one, so that acknowledgements can resume) and asserts that no acknowledged
 * completion is lost; {@code -Didempotency.redis.failover.measure=true} adds runs with 0
 * and 1 replicas to acknowledge, printed as {@code [sentinel]} lines.
 */
class RedisSentinelFailoverTests {

	private static final int THREADS = 8;

	@Test
	void withReplicasToAckAKilledPrimaryLosesNoAcknowledgedCompletion() throws Exception {
		FailoverLoad.Result result = failover(1);
		System.out.println("[sentinel] " + result);
		assertThat(result.unexpected()).as("failures other than IdempotencyStoreException").isEmpty();
		assertThat(result.lost()).as("acknowledged completions missing after the failover").isZero();
		assertThat(result.acknowledged()).isPositive();
		assertThat(result.recoveredMillis()).as("the promoted primary is written").isPositive();
	}

	@Test
	@EnabledIfSystemProperty(named = "idempotency.redis.failover.measure", matches = "true")
	void measureFailoversWithAndWithoutReplicaAcknowledgement() throws Exception {
		for (int run = 0; run < 3; run++) {
			for (int replicasToAck : new int[] { 0, 1 }) {
				System.out.println("[sentinel] run " + run + ": " + failover(replicasToAck));
			}
		}
	}

	private static FailoverLoad.Result failover(int replicasToAck) throws Exception {
		try (RedisSentinelGroup group = RedisSentinelGroup.start()) {
			LettuceConnectionFactory factory = group.connectionFactory(Duration.ofSeconds(2));
			try {
				RedisIdempotencyStore store = RedisIdempotencyStore
					.builder(factory, "idem-sentinel-" + UUID.randomUUID() + ":")
					.replicasToAck(replicasToAck)
					.replicasAckTimeout(Duration.ofMillis(500))
					.build();
				int victim = group.primary();
				try (FailoverLoad load = new FailoverLoad(store, THREADS, (key) -> true)) {
					load.awaitRunning(Duration.ofMillis(1500), Duration.ofSeconds(30));
					long killedAt = System.nanoTime();
					group.kill(victim);
					// Sentinel promoted the replica after 2 s here, after 40 s in a CI
					// run at load 12
					long deadline = killedAt + Duration.ofSeconds(60).toNanos();
					while (group.primary() == victim && System.nanoTime() < deadline) {
						Thread.sleep(100);
					}
					long promotedAt = System.nanoTime();
					if (replicasToAck > 0) {
						// the promoted primary has no replica to acknowledge until the
						// killed server is back
						Thread.sleep(1000);
						group.restartAsReplica(victim);
					}
					long recoveredAt = load.awaitVictimSuccessStartedAfter(System.nanoTime(), deadline);
					Thread.sleep(1000);
					return load.finish(replicasToAck, killedAt, promotedAt, recoveredAt);
				}
			}
			finally {
				factory.destroy();
			}
		}
	}

}
