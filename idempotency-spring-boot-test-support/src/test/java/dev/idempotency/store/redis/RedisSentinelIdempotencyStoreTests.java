package dev.idempotency.store.redis;

import java.time.Duration;
import java.util.UUID;

import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.ReserveResult;
import dev.idempotency.test.servers.RedisSentinelGroup;
import dev.idempotency.test.servers.RedisServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisConfiguration;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The store contract, unchanged, through Redis Sentinel: a primary, its replica and three
 * Sentinels of this class's own ({@link RedisSentinelGroup}), the store connected with
 * Spring Data Redis's {@code RedisSentinelConfiguration} and Lettuce, which finds the
 * primary through the Sentinels. The blocking methods and their asynchronous variants
 * (Lettuce's asynchronous commands, which the reactive doors call) both go to the
 * primary. Failovers are the failure tests' ({@code RedisSentinelFailoverTests}).
 */
class RedisSentinelIdempotencyStoreTests extends AbstractRedisStoreContractTests {

	private static RedisSentinelGroup group;

	private static LettuceConnectionFactory connectionFactory;

	@BeforeAll
	static void startGroup() {
		group = RedisSentinelGroup.start();
		connectionFactory = group.connectionFactory(Duration.ofSeconds(10));
	}

	@AfterAll
	static void stopGroup() {
		if (connectionFactory != null) {
			connectionFactory.destroy();
		}
		if (group != null) {
			group.close();
		}
	}

	@Override
	protected IdempotencyStore createStore() {
		// the group is this class's own and is stopped after it: nothing to clean up
		return store(connectionFactory);
	}

	/** Through a Sentinel that nothing listens for: the primary is never found. */
	@Override
	RedisConfiguration unreachable(int port) {
		return new RedisSentinelConfiguration().master(RedisSentinelGroup.MASTER_NAME).sentinel("127.0.0.1", port);
	}

	@Override
	IdempotencyStore store(LettuceConnectionFactory factory) {
		return RedisIdempotencyStore.builder(factory, "idem-sentinel-test-" + UUID.randomUUID() + ":").build();
	}

	/** A reservation made through the Sentinels is a record on the primary they name. */
	@Test
	void aRecordIsWrittenToThePrimaryTheSentinelsName() {
		RecordId id = newId();
		assertThat(this.store.reserve(request(id, "fp", token(), LONG_LEASE)))
			.isEqualTo(new ReserveResult.Acquired(false));
		String key = ((RedisIdempotencyStore) this.store).key(id);
		assertThat(RedisServer.cli(group.primary(), "EXISTS", key).strip()).isEqualTo("1");
	}

}
