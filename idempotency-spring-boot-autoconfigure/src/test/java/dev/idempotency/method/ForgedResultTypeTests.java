package dev.idempotency.method;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

import dev.idempotency.Idempotent;
import dev.idempotency.autoconfigure.IdempotencyAutoConfiguration;
import dev.idempotency.autoconfigure.redis.IdempotencyRedisStoreAutoConfiguration;
import dev.idempotency.core.internal.Fingerprints;
import dev.idempotency.core.internal.IdempotencyEngine;
import dev.idempotency.core.internal.IdempotentCall;
import dev.idempotency.store.IdempotencyRecord;
import dev.idempotency.store.IdempotencyStore;
import dev.idempotency.store.RecordId;
import dev.idempotency.store.RecordState;
import dev.idempotency.store.ReserveRequest;
import dev.idempotency.store.StoredResponse;
import dev.idempotency.testing.outside.Instantiations;
import dev.idempotency.testing.outside.LibraryValue;
import dev.idempotency.web.PrincipalScopeResolver;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * A record in the store names the class a method declared {@code Object} (or an
 * interface) is replayed as. Whoever can write the store must not choose which class
 * Jackson builds: a forged record naming a class outside the application is refused
 * before the class is even loaded, on the in-memory store and on the shared Redis (a key
 * prefix of its own, removed afterwards).
 */
class ForgedResultTypeTests {

	private static final String GADGET = "dev.idempotency.testing.outside.Gadget";

	private static final String IDENTITY = Vault.class.getName() + "#anything[java.lang.String]";

	@ParameterizedTest
	@ValueSource(strings = { "memory", "redis" })
	void aForgedRecordNamingAClassOutsideTheApplicationIsRefusedAndTheClassNeverBuilt(String store) {
		runner(store).run((context) -> {
			try {
				Vault vault = context.getBean(Vault.class);
				IdempotencyStore records = context.getBean(IdempotencyStore.class);
				// The fingerprint as the door computes it, checked against a real call.
				String real = "real-" + UUID.randomUUID();
				assertThat(vault.anything(real)).isEqualTo(new Note(real, 1));
				assertThat(records.find(id(real)).orElseThrow().fingerprint()).isEqualTo(fingerprint(real));

				String key = "forged-" + UUID.randomUUID();
				forge(records, key, GADGET);
				assertThatIllegalStateException().isThrownBy(() -> vault.anything(key))
					.withMessageContaining(GADGET)
					.withMessageContaining("idempotency.method.allowed-result-types");
				// Asked again: the same clear error, nothing in flight, nothing changed.
				assertThatIllegalStateException().isThrownBy(() -> vault.anything(key)).withMessageContaining(GADGET);
				IdempotencyRecord record = records.find(id(key)).orElseThrow();
				assertThat(record.state()).isEqualTo(RecordState.COMPLETED);
				assertThat(Instantiations.GADGET_INITIALIZED).hasValue(0);
				assertThat(Instantiations.GADGET_CONSTRUCTED).hasValue(0);
				assertThat(vault.runs()).isEqualTo(1);
				// Other keys are served as before.
				String other = "other-" + UUID.randomUUID();
				assertThat(vault.anything(other)).isEqualTo(new Note(other, 2));
				assertThat(vault.anything(other)).isEqualTo(new Note(other, 2));
			}
			finally {
				cleanUp(context, store);
			}
		});
	}

	/**
	 * A record stored with the classes of its values (a result whose values plain JSON
	 * would change) names classes inside its JSON too: a forged one naming a class
	 * outside the application is refused before the class is loaded, as the result's own
	 * class is.
	 */
	@ParameterizedTest
	@ValueSource(strings = { "memory", "redis" })
	void aForgedRecordNamingAClassInsideItsValuesIsRefusedAndTheClassNeverBuilt(String store) {
		runner(store).run((context) -> {
			try {
				Vault vault = context.getBean(Vault.class);
				IdempotencyStore records = context.getBean(IdempotencyStore.class);
				String key = "forged-inside-" + UUID.randomUUID();
				String owner = UUID.randomUUID().toString();
				records.reserve(new ReserveRequest(id(key), fingerprint(key), "Vault.anything", owner,
						Duration.ofMinutes(1), Duration.ofMinutes(10)));
				assertThat(records.complete(id(key), owner,
						new StoredResponse(200,
								Map.of("Result-Type", List.of("java.util.ArrayList"), "Result-Typing",
										List.of("classes")),
								("[[\"" + GADGET + "\",{}]]").getBytes(StandardCharsets.UTF_8))))
					.isTrue();
				assertThatIllegalStateException().isThrownBy(() -> vault.anything(key));
				assertThat(Instantiations.GADGET_INITIALIZED).hasValue(0);
				assertThat(Instantiations.GADGET_CONSTRUCTED).hasValue(0);
				assertThat(vault.runs()).isZero();
			}
			finally {
				cleanUp(context, store);
			}
		});
	}

	@ParameterizedTest
	@ValueSource(strings = { "memory", "redis" })
	void aResultOfAClassOutsideTheApplicationIsNotStoredAndItsKeyIsReleased(String store) {
		runner(store).run((context) -> {
			try {
				Vault vault = context.getBean(Vault.class);
				String key = "library-" + UUID.randomUUID();
				assertThatIllegalStateException().isThrownBy(() -> vault.library(key))
					.withMessageContaining(LibraryValue.class.getName())
					.withMessageContaining("idempotency.method.allowed-result-types");
				assertThat(context.getBean(IdempotencyStore.class).find(id(key))).isEmpty();
				// Released: the retry runs again (and fails the same way).
				assertThatIllegalStateException().isThrownBy(() -> vault.library(key));
				assertThat(vault.runs()).isEqualTo(2);
			}
			finally {
				cleanUp(context, store);
			}
		});
	}

	@ParameterizedTest
	@ValueSource(strings = { "memory", "redis" })
	void aClassOnTheAllowListAndAJdkValueAreReplayed(String store) {
		runner(store).withPropertyValues("idempotency.method.allowed-result-types=dev.idempotency.testing.outside")
			.run((context) -> {
				try {
					Vault vault = context.getBean(Vault.class);
					String key = "allowed-" + UUID.randomUUID();
					Object first = vault.library(key);
					assertThat(first).isEqualTo(new LibraryValue(key, 1));
					assertThat(vault.library(key)).isEqualTo(first);
					String text = "text-" + UUID.randomUUID();
					assertThat(vault.text(text)).isEqualTo(text + ":2");
					assertThat(vault.text(text)).isEqualTo(text + ":2");
					assertThat(vault.runs()).isEqualTo(2);
				}
				finally {
					cleanUp(context, store);
				}
			});
	}

	private ApplicationContextRunner runner(String store) {
		ApplicationContextRunner runner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(AopAutoConfiguration.class, DataRedisAutoConfiguration.class,
					IdempotencyRedisStoreAutoConfiguration.class, IdempotencyAutoConfiguration.class,
					IdempotencyMethodAutoConfiguration.class))
			.withUserConfiguration(Beans.class)
			.withPropertyValues("idempotency.store.type=" + store);
		if (store.equals("redis")) {
			runner = runner
				.withPropertyValues("idempotency.store.redis.key-prefix=idem-forged-" + UUID.randomUUID() + ":");
		}
		return runner;
	}

	private static void forge(IdempotencyStore records, String key, String className) {
		String owner = UUID.randomUUID().toString();
		records.reserve(new ReserveRequest(id(key), fingerprint(key), "Vault.anything", owner, Duration.ofMinutes(1),
				Duration.ofMinutes(10)));
		assertThat(records.complete(id(key), owner, new StoredResponse(200, Map.of("Result-Type", List.of(className)),
				"{}".getBytes(StandardCharsets.UTF_8))))
			.isTrue();
	}

	private static RecordId id(String key) {
		return IdempotencyEngine.recordId(PrincipalScopeResolver.ANONYMOUS, key, IdempotentCall.Door.METHOD);
	}

	private static String fingerprint(String key) {
		return Fingerprints.method(IDENTITY, CanonicalArguments.arguments(new Object[] { key }, List.of("key")));
	}

	/** Removes what this context wrote under its own Redis key prefix. */
	private static void cleanUp(AssertableApplicationContext context, String store) {
		if (!store.equals("redis")) {
			return;
		}
		String prefix = context.getEnvironment().getProperty("idempotency.store.redis.key-prefix");
		try (RedisConnection connection = context.getBean(RedisConnectionFactory.class).getConnection()) {
			Set<byte[]> keys = connection.keyCommands().keys((prefix + "*").getBytes(StandardCharsets.UTF_8));
			if (keys != null && !keys.isEmpty()) {
				connection.keyCommands().del(keys.toArray(new byte[0][]));
			}
		}
	}

	public record Note(String key, int run) {
	}

	/** Public: proxied by CGLIB. */
	public static class Vault {

		private final AtomicInteger runs = new AtomicInteger();

		public int runs() {
			return this.runs.get();
		}

		@Idempotent(key = "#p0")
		public Object anything(String key) {
			return new Note(key, this.runs.incrementAndGet());
		}

		@Idempotent(key = "#p0")
		public Object library(String key) {
			return new LibraryValue(key, this.runs.incrementAndGet());
		}

		@Idempotent(key = "#p0")
		public Object text(String key) {
			return key + ":" + this.runs.incrementAndGet();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class Beans {

		@Bean
		Vault vault() {
			return new Vault();
		}

	}

}
