package dev.idempotency.store.redis;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.IdempotencyStoreException;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.RecordState;
import dev.idempotency.store.ReserveResult;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.ReturnType;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.ScanOptions;
import org.springframework.data.redis.core.types.RedisClientInfo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * The store contract against the real Redis at 127.0.0.1:6379 ({@code .ci/run} starts it
 * in CI), plus what is particular to Redis: native expiry, key layout, prefixes and how
 * the scripts are sent. The server is shared: every test writes under its own
 * {@code idem-test-<uuid>:} prefix and deletes exactly those keys afterwards. When Redis
 * is down these tests fail, they do not skip.
 */
class RedisIdempotencyStoreTests extends AbstractRedisStoreContractTests {

	private static LettuceConnectionFactory connectionFactory;

	/** The prefixes this test wrote under; each is removed after the test. */
	private final List<String> prefixes = new ArrayList<>();

	@BeforeAll
	static void connect() {
		connectionFactory = connectionFactory(null);
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
	}

	static LettuceConnectionFactory connectionFactory(String clientName) {
		LettuceClientConfiguration.LettuceClientConfigurationBuilder client = LettuceClientConfiguration.builder()
			.commandTimeout(Duration.ofSeconds(10));
		if (clientName != null) {
			client.clientName(clientName);
		}
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", 6379), client.build());
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	@Override
	protected IdempotencyStore createStore() {
		return newStore(connectionFactory);
	}

	@Override
	RedisConfiguration unreachable(int port) {
		return new RedisStandaloneConfiguration("127.0.0.1", port);
	}

	@Override
	IdempotencyStore store(LettuceConnectionFactory factory) {
		return newStore(factory);
	}

	@Override
	protected void destroyStore(IdempotencyStore store) {
		try (RedisConnection connection = connectionFactory.getConnection()) {
			for (String prefix : this.prefixes) {
				for (byte[] key : keysUnder(connection, prefix)) {
					// -1 means no expiry: such a key would live forever. (-2, expired
					// since the scan, is fine.)
					assertThat(connection.keyCommands().pTtl(key)).as("PTTL of %s", string(key)).isNotEqualTo(-1L);
					connection.keyCommands().del(key);
				}
			}
		}
	}

	private RedisIdempotencyStore newStore(LettuceConnectionFactory factory) {
		String prefix = "idem-test-" + UUID.randomUUID() + ":";
		this.prefixes.add(prefix);
		return RedisIdempotencyStore.builder(factory, prefix).build();
	}

	private RedisIdempotencyStore redisStore() {
		return (RedisIdempotencyStore) this.store;
	}

	@Test
	void theNameIsRedisAndThereIsNothingToPurge() {
		assertThat(this.store.name()).isEqualTo("redis");
		assertThat(this.store.purgeExpired(100)).isZero();
	}

	@Test
	void aRecordAndItsKeyAreGoneAfterRetention() throws Exception {
		RecordId id = newId();
		Duration retention = Duration.ofMillis(600);
		this.store.reserve(request(id, "fp", token(), Duration.ofMillis(300), retention));
		IdempotencyRecord record = this.store.find(id).orElseThrow();
		byte[] key = bytes(redisStore().key(id));
		try (RedisConnection connection = connectionFactory.getConnection()) {
			assertThat(connection.keyCommands().pTtl(key)).isBetween(1L, retention.toMillis());
			assertThat(expireTime(connection, key)).as("the key expires when the record does")
				.isEqualTo(record.expiresAt().toEpochMilli());
			elapse(retention);
			assertThat(this.store.find(id)).isEmpty();
			assertThat(connection.keyCommands().exists(key)).isFalse();
			assertThat(connection.keyCommands().pTtl(key)).as("PTTL of a missing key").isEqualTo(-2L);
		}
	}

	@Test
	void heartbeatTakeoverAndCompletionKeepTheExpiry() throws Exception {
		RecordId id = newId();
		Duration lease = Duration.ofMillis(500);
		String first = token();
		this.store.reserve(request(id, "fp", first, lease, RETENTION));
		IdempotencyRecord created = this.store.find(id).orElseThrow();
		assertThat(Duration.between(created.leaseExpiresAt(), created.expiresAt()))
			.as("lease and expiry are counted from the same Redis instant")
			.isEqualTo(RETENTION.minus(lease));
		long expiresAt = created.expiresAt().toEpochMilli();
		byte[] key = bytes(redisStore().key(id));
		try (RedisConnection connection = connectionFactory.getConnection()) {
			assertThat(expireTime(connection, key)).isEqualTo(expiresAt);

			// Redis TIME counts milliseconds: a beat in the same millisecond would extend
			// nothing.
			Thread.sleep(5);
			assertThat(this.store.heartbeat(id, first, lease)).isTrue();
			assertThat(expireTime(connection, key)).isEqualTo(expiresAt);
			IdempotencyRecord beaten = this.store.find(id).orElseThrow();
			assertThat(beaten.leaseExpiresAt()).isAfter(created.leaseExpiresAt());
			assertThat(beaten.expiresAt()).isEqualTo(created.expiresAt());

			elapse(lease);
			String second = token();
			assertThat(this.store.reserve(request(id, "fp", second, LONG_LEASE, RETENTION)))
				.isEqualTo(new ReserveResult.Acquired(true));
			assertThat(expireTime(connection, key)).isEqualTo(expiresAt);

			assertThat(this.store.complete(id, second, response(201, "{}"))).isTrue();
			assertThat(expireTime(connection, key)).isEqualTo(expiresAt);
			IdempotencyRecord completed = this.store.find(id).orElseThrow();
			assertThat(completed.state()).isEqualTo(RecordState.COMPLETED);
			assertThat(completed.leaseExpiresAt()).isNull();
			assertThat(completed.expiresAt()).isEqualTo(created.expiresAt());
		}
	}

	@Test
	void storesWithDifferentPrefixesDoNotSeeEachOther() {
		RedisIdempotencyStore other = newStore(connectionFactory);
		RecordId id = newId();
		String owner = token();
		assertThat(this.store.reserve(request(id, "fp-a", owner, LONG_LEASE)))
			.isEqualTo(new ReserveResult.Acquired(false));
		assertThat(other.find(id)).isEmpty();
		String otherOwner = token();
		assertThat(other.reserve(request(id, "fp-b", otherOwner, LONG_LEASE)))
			.isEqualTo(new ReserveResult.Acquired(false));
		assertThat(other.complete(id, owner, response(200, "{}"))).as("a token of the other prefix").isFalse();
		assertThat(this.store.complete(id, owner, response(201, "{\"a\":1}"))).isTrue();
		assertThat(other.find(id).orElseThrow().state()).isEqualTo(RecordState.IN_PROGRESS);
		assertThat(other.find(id).orElseThrow().fingerprint()).isEqualTo("fp-b");
		assertThat(this.store.find(id).orElseThrow().fingerprint()).isEqualTo("fp-a");
		assertThat(redisStore().key(id)).isNotEqualTo(other.key(id));
	}

	@Test
	void anyScopeMakesASafeHashTaggedKey() {
		RedisIdempotencyStore store = redisStore();
		RecordId braces = new RecordId("tenant{a}}{b:ü\u0000", UUID.randomUUID().toString());
		String owner = token();
		assertThat(store.reserve(request(braces, "fp", owner, LONG_LEASE)))
			.isEqualTo(new ReserveResult.Acquired(false));
		String key = store.key(braces);
		assertThat(key).matches(java.util.regex.Pattern.quote(store.keyPrefix()) + "\\{[0-9a-f]{64}\\}");
		try (RedisConnection connection = connectionFactory.getConnection()) {
			Map<byte[], byte[]> fields = connection.hashCommands().hGetAll(bytes(key));
			Map<String, String> readable = new java.util.HashMap<>();
			fields.forEach((name, value) -> readable.put(string(name), string(value)));
			assertThat(readable).containsEntry("scope", braces.scope()).containsEntry("key", braces.key());
		}
		// scope and key are split unambiguously: moving characters across the boundary is
		// another record
		RecordId left = new RecordId("a\u0000b", "c");
		RecordId right = new RecordId("a", "b\u0000c");
		assertThat(store.key(left)).isNotEqualTo(store.key(right));
		assertThat(store.reserve(request(left, "fp", token(), LONG_LEASE)))
			.isEqualTo(new ReserveResult.Acquired(false));
		assertThat(store.reserve(request(right, "fp", token(), LONG_LEASE)))
			.isEqualTo(new ReserveResult.Acquired(false));
	}

	@Test
	void withReplicasToAckAndNoReplicaAReservationFailsAndIsGivenBack() {
		// the shared Redis has no replica: WAIT 1 times out with 0
		RedisIdempotencyStore acking = RedisIdempotencyStore.builder(connectionFactory, redisStore().keyPrefix())
			.replicasToAck(1)
			.replicasAckTimeout(Duration.ofMillis(100))
			.build();
		RecordId id = newId();
		assertThatExceptionOfType(IdempotencyStoreException.class)
			.isThrownBy(() -> acking.reserve(request(id, "fp", token(), LONG_LEASE)))
			.withMessageContaining("0 of 1 replicas");
		assertThat(this.store.find(id)).isEmpty();

		String owner = token();
		assertThat(this.store.reserve(request(id, "fp", owner, LONG_LEASE)))
			.isEqualTo(new ReserveResult.Acquired(false));
		assertThatExceptionOfType(IdempotencyStoreException.class)
			.isThrownBy(() -> acking.complete(id, owner, response(201, "{}")));
		assertThat(this.store.find(id).orElseThrow().state())
			.as("the primary has the completion, only unconfirmed on replicas")
			.isEqualTo(RecordState.COMPLETED);
		assertThat(acking.heartbeat(id, owner, LONG_LEASE)).as("no wait where nothing was written").isFalse();
	}

	@Test
	void withReplicasToAckAndNoReplicaARecordedResponseFailsAndStaysOnThePrimary() {
		// the shared Redis has no replica: WAIT 1 times out with 0
		RedisIdempotencyStore acking = RedisIdempotencyStore.builder(connectionFactory, redisStore().keyPrefix())
			.replicasToAck(1)
			.replicasAckTimeout(Duration.ofMillis(100))
			.build();
		RecordId id = newId();
		assertThatExceptionOfType(IdempotencyStoreException.class)
			.isThrownBy(() -> acking.recordCompleted(completed(id, "fp", response(201, "{\"a\":1}"), RETENTION)))
			.withMessageContaining("0 of 1 replicas");
		IdempotencyRecord recorded = this.store.find(id).orElseThrow();
		assertThat(recorded.state()).as("the operation ran: its answer is kept, only unconfirmed on replicas")
			.isEqualTo(RecordState.COMPLETED);
		assertThat(recorded.response()).isEqualTo(response(201, "{\"a\":1}"));
		assertThat(acking.recordCompleted(completed(id, "fp", response(200, "{}"), RETENTION)))
			.as("no wait where nothing was written: the live record is returned")
			.hasValueSatisfying((existing) -> assertThat(existing.response()).isEqualTo(recorded.response()));
	}

	@Test
	void aRecordedResponseExpiresWithItsKeyLikeACompletedReservation() throws Exception {
		RecordId id = newId();
		Duration retention = Duration.ofMillis(600);
		assertThat(this.store.recordCompleted(completed(id, "fp", response(201, "{}"), retention))).isEmpty();
		IdempotencyRecord record = this.store.find(id).orElseThrow();
		assertThat(record.leaseExpiresAt()).isNull();
		byte[] key = bytes(redisStore().key(id));
		try (RedisConnection connection = connectionFactory.getConnection()) {
			assertThat(expireTime(connection, key)).as("the key expires when the record does")
				.isEqualTo(record.expiresAt().toEpochMilli());
			Map<byte[], byte[]> fields = connection.hashCommands().hGetAll(key);
			Set<String> names = new HashSet<>();
			fields.keySet().forEach((name) -> names.add(string(name)));
			assertThat(names).as("the fields complete() leaves")
				.containsExactlyInAnyOrder("scope", "key", "fingerprint", "operation", "state", "expires_at_ms",
						"created_ms", "response");
			elapse(retention);
			assertThat(this.store.find(id)).isEmpty();
			assertThat(connection.keyCommands().exists(key)).isFalse();
		}
	}

	@Test
	void aNegativeReplicaCountOrAMissingTimeoutIsRefused() {
		assertThatIllegalArgumentException().isThrownBy(() -> RedisIdempotencyStore.builder(connectionFactory, "p:")
			.replicasToAck(-1)
			.replicasAckTimeout(Duration.ofSeconds(1))
			.build());
		assertThatIllegalArgumentException().isThrownBy(() -> RedisIdempotencyStore.builder(connectionFactory, "p:")
			.replicasToAck(1)
			.replicasAckTimeout(Duration.ZERO)
			.build());
	}

	@Test
	void aPrefixWithBracesIsRefused() {
		assertThatIllegalArgumentException()
			.isThrownBy(() -> RedisIdempotencyStore.builder(connectionFactory, "app{1}:").build())
			.withMessageContaining("'{'");
	}

	/**
	 * A stopped and started factory closes the connection the store's native path had
	 * taken from it and opens another: the store's next call goes over the new one, not
	 * to a closed connection until the application restarts.
	 */
	@Test
	void afterItsFactoryIsStoppedAndStartedTheStoreTalksOverTheNewConnection() {
		LettuceConnectionFactory restarted = connectionFactory(null);
		try {
			RedisIdempotencyStore store = newStore(restarted);
			RecordId id = newId();
			String owner = token();
			assertThat(store.reserve(request(id, "fp", owner, LONG_LEASE))).isInstanceOf(ReserveResult.Acquired.class);
			restarted.stop();
			restarted.start();
			assertThat(store.complete(id, owner, response(201, "{\"id\":1}"))).isTrue();
			assertThat(store.find(id)).get()
				.satisfies((record) -> assertThat(record.state()).isEqualTo(RecordState.COMPLETED));
		}
		finally {
			restarted.destroy();
		}
	}

	/**
	 * A Lettuce factory that does not share its native connection lends one per call: the
	 * store goes through Spring Data Redis then, with the same transitions.
	 */
	@Test
	void overAFactoryThatDoesNotShareItsConnectionTheTransitionsHold() {
		LettuceConnectionFactory dedicated = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", 6379),
				LettuceClientConfiguration.builder().commandTimeout(Duration.ofSeconds(10)).build());
		dedicated.setShareNativeConnection(false);
		dedicated.afterPropertiesSet();
		dedicated.start();
		try {
			RedisIdempotencyStore store = newStore(dedicated);
			RecordId id = newId();
			String owner = token();
			assertThat(store.reserve(request(id, "fp", owner, LONG_LEASE))).isInstanceOf(ReserveResult.Acquired.class);
			assertThat(store.reserve(request(id, "fp", token(), LONG_LEASE)))
				.isInstanceOf(ReserveResult.Existing.class);
			assertThat(store.complete(id, owner, response(201, "{\"id\":1}"))).isTrue();
			assertThat(store.find(id)).get().satisfies((record) -> {
				assertThat(record.state()).isEqualTo(RecordState.COMPLETED);
				assertThat(new String(record.response().body(), StandardCharsets.UTF_8)).isEqualTo("{\"id\":1}");
			});
			assertThat(store.remove(id)).isTrue();
		}
		finally {
			dedicated.destroy();
		}
	}

	@Test
	void everyTransitionIsSentByShaOfAScriptCachedOnTheServer() {
		// a connection of its own, named, so that CLIENT LIST shows the last command it
		// sent
		String clientName = "idem-test-" + UUID.randomUUID();
		LettuceConnectionFactory named = connectionFactory(clientName);
		try (RedisConnection inspector = connectionFactory.getConnection()) {
			RedisIdempotencyStore store = newStore(named);
			RecordId id = newId();
			String owner = token();
			Set<String> lastCommands = new HashSet<>();
			// each transition twice: the first may meet an empty script cache (EVALSHA,
			// NOSCRIPT, EVAL), the second must go by SHA alone
			for (int i = 0; i < 2; i++) {
				store.reserve(request(id, "fp", owner, LONG_LEASE));
			}
			lastCommands.add(lastCommand(inspector, clientName));
			for (int i = 0; i < 2; i++) {
				store.heartbeat(id, owner, LONG_LEASE);
			}
			lastCommands.add(lastCommand(inspector, clientName));
			for (int i = 0; i < 2; i++) {
				store.find(id);
			}
			lastCommands.add(lastCommand(inspector, clientName));
			for (int i = 0; i < 2; i++) {
				store.release(id, owner);
			}
			lastCommands.add(lastCommand(inspector, clientName));
			store.reserve(request(id, "fp", owner, LONG_LEASE));
			for (int i = 0; i < 2; i++) {
				store.complete(id, owner, response(200, "{}"));
			}
			lastCommands.add(lastCommand(inspector, clientName));
			RecordId recorded = newId();
			for (int i = 0; i < 2; i++) {
				store.recordCompleted(completed(recorded, "fp", response(200, "{}"), RETENTION));
			}
			lastCommands.add(lastCommand(inspector, clientName));
			assertThat(lastCommands).containsExactly("evalsha");

			List<String> shas = StoreScriptShas.all();
			assertThat(shas).hasSize(7).doesNotHaveDuplicates();
			assertThat(inspector.scriptingCommands().scriptExists(shas.toArray(String[]::new)))
				.as("every script is in the server's cache")
				.containsOnly(true);
		}
		finally {
			named.destroy();
		}
	}

	private static String lastCommand(RedisConnection inspector, String clientName) {
		List<RedisClientInfo> clients = inspector.serverCommands()
			.getClientList()
			.stream()
			.filter((client) -> clientName.equals(client.getName()))
			.toList();
		assertThat(clients).as("connections named %s", clientName).hasSize(1);
		return clients.get(0).getLastCommand();
	}

	private static long expireTime(RedisConnection connection, byte[] key) {
		// PEXPIRETIME (Redis 7): the absolute Unix time in ms at which the key expires.
		// Sent inside EVAL because Lettuce's generic execute expects a bulk reply, and
		// this is an integer.
		return connection.scriptingCommands()
			.eval(bytes("return redis.call('PEXPIRETIME', KEYS[1])"), ReturnType.INTEGER, 1, key);
	}

	private static List<byte[]> keysUnder(RedisConnection connection, String prefix) {
		List<byte[]> keys = new ArrayList<>();
		// the prefix is "idem-test-<uuid>:", free of glob characters
		try (Cursor<byte[]> cursor = connection.keyCommands()
			.scan(ScanOptions.scanOptions().match(prefix + "*").count(1000).build())) {
			cursor.forEachRemaining(keys::add);
		}
		return keys;
	}

	private static byte[] bytes(String value) {
		return value.getBytes(StandardCharsets.UTF_8);
	}

	private static String string(byte[] value) {
		return new String(value, StandardCharsets.UTF_8);
	}

}
