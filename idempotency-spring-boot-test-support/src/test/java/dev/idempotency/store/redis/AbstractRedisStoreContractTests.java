package dev.idempotency.store.redis;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.contract.IdempotencyStoreContractTests;
import org.junit.jupiter.api.AfterEach;

import org.springframework.data.redis.connection.RedisConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * What the Redis store's contract classes (standalone, Sentinel, Cluster) share: a record
 * is found by its scope and key only, and an unreachable store is one over a factory of
 * its own whose only address is a port nothing listens on.
 */
abstract class AbstractRedisStoreContractTests extends IdempotencyStoreContractTests {

	/** The factories of {@link #createUnreachableStore()}, destroyed after the test. */
	private final List<LettuceConnectionFactory> unreachableFactories = new ArrayList<>();

	/**
	 * A record is a hash of its scope and key (docs/redis-store.md): a key alone would be
	 * found only by a scan of the keyspace, which the store never does.
	 */
	@Override
	protected boolean findsAKeyWithoutItsScope() {
		return false;
	}

	/** The configuration of a Redis at {@code port}, where nothing listens. */
	abstract RedisConfiguration unreachable(int port);

	/** The store under test over {@code factory}. */
	abstract IdempotencyStore store(LettuceConnectionFactory factory);

	@Override
	protected IdempotencyStore createUnreachableStore() throws IOException {
		LettuceConnectionFactory closed = new LettuceConnectionFactory(unreachable(closedPort()),
				LettuceClientConfiguration.builder().commandTimeout(Duration.ofSeconds(2)).build());
		closed.afterPropertiesSet();
		closed.start();
		this.unreachableFactories.add(closed);
		return store(closed);
	}

	@AfterEach
	void destroyUnreachableFactories() {
		this.unreachableFactories.forEach(LettuceConnectionFactory::destroy);
	}

	/** A port that was free a moment ago: nothing listens on it. */
	static int closedPort() throws IOException {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
	}

}
