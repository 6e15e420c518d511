package dev.idempotency.store.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.IdempotencyStoreException;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.RecordState;
import dev.idempotency.store.ReserveResult;
import dev.idempotency.test.servers.RedisCluster;
import dev.idempotency.test.servers.RedisServer;
import io.lettuce.core.cluster.SlotHash;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * The store contract, unchanged, on a real Redis Cluster of three primaries and three
 * replicas (the {@linkplain RedisCluster#shared() shared} {@link RedisCluster} of this
 * test run, each store under a key prefix of its own), through Spring Data Redis's
 * {@code RedisClusterConfiguration} with Lettuce and topology refresh on. Plus what
 * Cluster adds: one record is one key in one slot (the hash tag), records spread over
 * every primary, scripts go by SHA on every primary, and a script cache flushed on every
 * node (as after a restart or a failover) costs nothing but one {@code EVAL}.
 */
class RedisClusterIdempotencyStoreTests extends AbstractRedisStoreContractTests {

	private static RedisCluster cluster;

	private static LettuceConnectionFactory connectionFactory;

	@BeforeAll
	static void startCluster() {
		cluster = RedisCluster.shared();
		connectionFactory = cluster.connectionFactory(Duration.ofSeconds(10));
	}

	@AfterAll
	static void closeConnections() {
		// the shared cluster keeps running for the other classes of this run
		if (connectionFactory != null) {
			connectionFactory.destroy();
		}
	}

	@Override
	protected IdempotencyStore createStore() {
		// the cluster is this run's own and is thrown away when the JVM exits: nothing to
		// clean up
		return store(connectionFactory);
	}

	/**
	 * A cluster whose only seed is a port nothing listens on: it never learns a topology.
	 */
	@Override
	RedisConfiguration unreachable(int port) {
		return new RedisClusterConfiguration(List.of("127.0.0.1:" + port));
	}

	@Override
	IdempotencyStore store(LettuceConnectionFactory factory) {
		return RedisIdempotencyStore.builder(factory, "idem-cluster-test-" + UUID.randomUUID() + ":").build();
	}

	private RedisIdempotencyStore redisStore() {
		return (RedisIdempotencyStore) this.store;
	}

	@Test
	void oneRecordIsOneKeyInTheSlotOfItsHashTagAndRecordsSpreadOverEveryPrimary() {
		Map<Integer, Integer> recordsPerPrimary = new HashMap<>();
		for (int i = 0; i < 30; i++) {
			RecordId id = newId();
			String owner = token();
			assertThat(this.store.reserve(request(id, "fp", owner, LONG_LEASE)))
				.isEqualTo(new ReserveResult.Acquired(false));
			assertThat(this.store.complete(id, owner, response(201, "{}"))).isTrue();
			String key = redisStore().key(id);
			String tag = key.substring(key.indexOf('{') + 1, key.indexOf('}'));
			int slot = Integer.parseInt(RedisServer.cli(cluster.ports().get(0), "CLUSTER", "KEYSLOT", key).strip());
			assertThat(slot).as("the slot of %s is the slot of its hash tag alone", key)
				.isEqualTo(SlotHash.getSlot(tag));
			int primary = cluster.masterOfSlot(slot);
			assertThat(RedisServer.cli(primary, "EXISTS", key).strip()).isEqualTo("1");
			assertThat(RedisServer.cli(primary, "TYPE", key).strip()).isEqualTo("hash");
			recordsPerPrimary.merge(primary, 1, Integer::sum);
		}
		assertThat(recordsPerPrimary.keySet()).containsExactlyInAnyOrderElementsOf(cluster.masters());
	}

	@Test
	void everyPrimaryRunsTheScriptsBySha() {
		for (int i = 0; i < 30; i++) {
			RecordId id = newId();
			String owner = token();
			this.store.reserve(request(id, "fp", owner, LONG_LEASE));
			this.store.heartbeat(id, owner, LONG_LEASE);
			this.store.find(id);
			this.store.complete(id, owner, response(200, "{}"));
			this.store.release(id, owner);
			this.store.remove(id);
			this.store.recordCompleted(completed(newId(), "fp", response(200, "{}"), RETENTION));
		}
		List<String> shas = StoreScriptShas.all();
		for (int primary : cluster.masters()) {
			String[] command = new String[shas.size() + 2];
			command[0] = "SCRIPT";
			command[1] = "EXISTS";
			for (int i = 0; i < shas.size(); i++) {
				command[i + 2] = shas.get(i);
			}
			assertThat(RedisServer.cli(primary, command).lines().map(String::strip).toList())
				.as("scripts cached on %d", primary)
				.containsOnly("1");
			assertThat(RedisServer.cli(primary, "INFO", "commandstats")).as("EVALSHA run on %d", primary)
				.contains("cmdstat_evalsha:calls=");
		}
	}

	@Test
	void withReplicasToAckAReservationOrCompletionWaitsForTheReplicaOfItsSlot() {
		RedisIdempotencyStore acking = RedisIdempotencyStore
			.builder(connectionFactory, "idem-cluster-ack-" + UUID.randomUUID() + ":")
			.replicasToAck(1)
			.replicasAckTimeout(Duration.ofSeconds(2))
			.build();
		RecordId id = newId();
		String owner = token();
		assertThat(acking.reserve(request(id, "fp", owner, LONG_LEASE))).isEqualTo(new ReserveResult.Acquired(false));
		assertThat(acking.complete(id, owner, response(201, "{}"))).isTrue();
		assertThat(acking.recordCompleted(completed(newId(), "fp", response(201, "{}"), RETENTION))).isEmpty();

		// A replica that stops answering (SIGSTOP) still looks connected to its primary.
		// A WAIT sent on another connection than the script's would count no write of its
		// own and return at once; on the script's connection it times out.
		RecordId other = newId();
		int primary = cluster.masterOfSlot(SlotHash.getSlot(tag(acking.key(other))));
		int replica = cluster.replicaOf(primary);
		cluster.pause(replica);
		try {
			assertThatExceptionOfType(IdempotencyStoreException.class)
				.isThrownBy(() -> acking.reserve(request(other, "fp", token(), LONG_LEASE)))
				.withMessageContaining("0 of 1 replicas");
			assertThat(acking.find(other)).as("the unacknowledged reservation is given back").isEmpty();
		}
		finally {
			cluster.resume(replica);
		}
		String again = token();
		assertThat(acking.reserve(request(other, "fp", again, LONG_LEASE)))
			.isEqualTo(new ReserveResult.Acquired(false));
		assertThat(acking.complete(other, again, response(201, "{}"))).isTrue();
	}

	private static String tag(String key) {
		return key.substring(key.indexOf('{') + 1, key.indexOf('}'));
	}

	@Test
	void aScriptCacheFlushedOnEveryNodeBetweenCallsIsReloaded() {
		RecordId id = newId();
		String owner = token();
		cluster.onEveryNode("SCRIPT", "FLUSH");
		assertThat(this.store.reserve(request(id, "fp", owner, LONG_LEASE)))
			.isEqualTo(new ReserveResult.Acquired(false));
		cluster.onEveryNode("SCRIPT", "FLUSH");
		assertThat(this.store.heartbeat(id, owner, LONG_LEASE)).isTrue();
		cluster.onEveryNode("SCRIPT", "FLUSH");
		assertThat(this.store.find(id).orElseThrow().state()).isEqualTo(RecordState.IN_PROGRESS);
		cluster.onEveryNode("SCRIPT", "FLUSH");
		assertThat(this.store.complete(id, owner, response(201, "{\"a\":1}"))).isTrue();
		cluster.onEveryNode("SCRIPT", "FLUSH");
		assertThat(this.store.reserve(request(id, "fp", token(), LONG_LEASE)))
			.isInstanceOf(ReserveResult.Existing.class);
		cluster.onEveryNode("SCRIPT", "FLUSH");
		assertThat(new String(this.store.find(id).orElseThrow().response().body(), StandardCharsets.UTF_8))
			.isEqualTo("{\"a\":1}");
		cluster.onEveryNode("SCRIPT", "FLUSH");
		assertThat(this.store.release(id, owner)).as("completed: nothing to release").isFalse();
		cluster.onEveryNode("SCRIPT", "FLUSH");
		assertThat(this.store.recordCompleted(completed(id, "fp", response(200, "{}"), RETENTION)))
			.hasValueSatisfying((existing) -> assertThat(existing.state()).isEqualTo(RecordState.COMPLETED));
		RecordId recorded = newId();
		cluster.onEveryNode("SCRIPT", "FLUSH");
		assertThat(this.store.recordCompleted(completed(recorded, "fp", response(201, "{}"), RETENTION))).isEmpty();
	}

}
