package dev.idempotency.autoconfigure.redis;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import dev.idempotency.autoconfigure.redis.IdempotencyRedisStoreProperties.EvictionCheck;
import dev.idempotency.autoconfigure.redis.RedisEvictionPolicyCheck.ConfigReader;
import dev.idempotency.autoconfigure.redis.RedisEvictionPolicyCheck.Verdict;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.data.redis.RedisSystemException;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * {@link RedisEvictionPolicyCheck} over configurations given by the test; one test reads
 * the real Redis at 127.0.0.1:6379, whose policy it changes for a moment and restores.
 */
@ExtendWith(OutputCaptureExtension.class)
class RedisEvictionPolicyCheckTests {

	@ParameterizedTest
	@ValueSource(strings = { "allkeys-lru", "allkeys-lfu", "allkeys-random", "volatile-lru", "volatile-lfu",
			"volatile-random", "volatile-ttl", "a-policy-of-a-later-redis" })
	void everyPolicyButNoevictionEvictsRecordsOnceMaxmemoryIsReached(String policy) {
		RedisEvictionPolicyCheck.Finding finding = check(standalone(policy, "104857600"), EvictionCheck.WARN).inspect();
		assertThat(finding.verdict()).isEqualTo(Verdict.EVICTS);
		assertThat(finding.message()).contains("maxmemory-policy=" + policy + ", maxmemory=104857600")
			.contains("lets a retry of its request run the operation again")
			.contains("Set maxmemory-policy to noeviction")
			.contains("idempotency.store.redis.eviction-check=fail");
	}

	@Test
	void warnLogsTheRiskAndStarts(CapturedOutput output) {
		check(standalone("allkeys-lru", "1073741824"), EvictionCheck.WARN).afterPropertiesSet();
		assertThat(output).contains("WARN")
			.contains("Redis may evict idempotency records under memory pressure (maxmemory-policy=allkeys-lru");
	}

	@Test
	void failRefusesToStart() {
		RedisEvictionPolicyCheck check = check(standalone("volatile-ttl", "1073741824"), EvictionCheck.FAIL);
		assertThatIllegalStateException().isThrownBy(check::afterPropertiesSet)
			.withMessageContaining("maxmemory-policy=volatile-ttl, maxmemory=1073741824")
			.withMessageContaining("volatile-* policies evict them");
	}

	@Test
	void noevictionKeepsRecordsAndStartsInEveryMode(CapturedOutput output) {
		for (EvictionCheck mode : List.of(EvictionCheck.WARN, EvictionCheck.FAIL)) {
			RedisEvictionPolicyCheck check = check(standalone("noeviction", "104857600"), mode);
			assertThat(check.inspect().verdict()).isEqualTo(Verdict.KEEPS);
			check.afterPropertiesSet();
		}
		assertThat(output).doesNotContain("WARN");
	}

	@Test
	void anEvictingPolicyWithoutMaxmemoryEvictsNothingYetAndIsOnlyNoted(CapturedOutput output) {
		RedisEvictionPolicyCheck check = check(standalone("allkeys-lru", "0"), EvictionCheck.FAIL);
		assertThat(check.inspect().verdict()).isEqualTo(Verdict.NO_LIMIT);
		check.afterPropertiesSet();
		assertThat(output).contains("INFO").contains("once a maxmemory is set").doesNotContain("WARN");
	}

	@Test
	void aRedisWithoutConfigIsNotedAndStartsEvenInFailMode(CapturedOutput output) {
		ConfigReader disabled = (parameter) -> {
			throw new RedisSystemException("ERR unknown command 'CONFIG'", null);
		};
		RedisEvictionPolicyCheck check = check(disabled, EvictionCheck.FAIL);
		assertThat(check.inspect().verdict()).isEqualTo(Verdict.UNKNOWN);
		check.afterPropertiesSet();
		assertThat(output).contains("INFO")
			.contains("Could not check whether Redis may evict idempotency records")
			.contains("unknown command 'CONFIG'");
		assertThat(check((parameter) -> new Properties(), EvictionCheck.FAIL).inspect().verdict())
			.as("CONFIG GET answered, but not with the policy")
			.isEqualTo(Verdict.UNKNOWN);
	}

	@Test
	void offAsksRedisNothing() {
		List<String> asked = new ArrayList<>();
		check((parameter) -> {
			asked.add(parameter);
			return standalone("noeviction", "1").get(parameter);
		}, EvictionCheck.WARN).afterPropertiesSet();
		assertThat(asked).as("warn asks").containsExactly("maxmemory-policy", "maxmemory");
		asked.clear();
		check((parameter) -> {
			asked.add(parameter);
			return new Properties();
		}, EvictionCheck.OFF).afterPropertiesSet();
		assertThat(asked).isEmpty();
	}

	/**
	 * Spring Data Redis answers {@code CONFIG GET} on a cluster with every node's value
	 * under {@code <node>.<parameter>}: one evicting node is enough.
	 */
	@Test
	void onAClusterEveryNodeIsJudgedAndTheEvictingOneNamed() {
		ConfigReader cluster = reader(
				Map.of("10.0.0.1:7000.maxmemory-policy", "noeviction", "10.0.0.2:7000.maxmemory-policy", "allkeys-lfu",
						"10.0.0.1:7000.maxmemory", "1000000", "10.0.0.2:7000.maxmemory", "1000000"));
		RedisEvictionPolicyCheck.Finding finding = check(cluster, EvictionCheck.WARN).inspect();
		assertThat(finding.verdict()).isEqualTo(Verdict.EVICTS);
		assertThat(finding.message()).contains("node 10.0.0.2:7000: maxmemory-policy=allkeys-lfu, maxmemory=1000000")
			.doesNotContain("10.0.0.1:7000");
		assertThat(check(
				reader(Map.of("10.0.0.1:7000.maxmemory-policy", "noeviction", "10.0.0.2:7000.maxmemory-policy",
						"noeviction", "10.0.0.1:7000.maxmemory", "0", "10.0.0.2:7000.maxmemory", "0")),
				EvictionCheck.WARN)
			.inspect()
			.verdict()).isEqualTo(Verdict.KEEPS);
	}

	@Test
	void aPolicyWithoutAReadableMaxmemoryCountsAsEvicting() {
		assertThat(check(reader(Map.of("maxmemory-policy", "allkeys-lru")), EvictionCheck.WARN).inspect().verdict())
			.isEqualTo(Verdict.EVICTS);
	}

	/**
	 * Through a real connection: the shared Redis's policy is set to {@code allkeys-lru}
	 * for the time of one check, then set back to what it was (whatever the outcome). Its
	 * {@code maxmemory} is left alone, so the verdict follows the server's own limit.
	 */
	@Test
	void theRealRedisIsReadThroughItsConnection() {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", 6379),
				LettuceClientConfiguration.builder().commandTimeout(Duration.ofSeconds(10)).build());
		factory.afterPropertiesSet();
		factory.start();
		try (RedisConnection admin = factory.getConnection()) {
			String original = admin.serverCommands().getConfig("maxmemory-policy").getProperty("maxmemory-policy");
			String maxmemory = admin.serverCommands().getConfig("maxmemory").getProperty("maxmemory");
			RedisEvictionPolicyCheck check = new RedisEvictionPolicyCheck(factory, EvictionCheck.WARN);
			assertThat(check.inspect().verdict()).as("the server as it is (%s)", original)
				.isEqualTo("noeviction".equals(original) ? Verdict.KEEPS
						: "0".equals(maxmemory) ? Verdict.NO_LIMIT : Verdict.EVICTS);
			try {
				admin.serverCommands().setConfig("maxmemory-policy", "allkeys-lru");
				RedisEvictionPolicyCheck.Finding finding = check.inspect();
				assertThat(finding.verdict()).isEqualTo("0".equals(maxmemory) ? Verdict.NO_LIMIT : Verdict.EVICTS);
				assertThat(finding.message()).contains("maxmemory-policy=allkeys-lru, maxmemory=" + maxmemory);
			}
			finally {
				admin.serverCommands().setConfig("maxmemory-policy", original);
			}
			assertThat(admin.serverCommands().getConfig("maxmemory-policy").getProperty("maxmemory-policy"))
				.as("restored")
				.isEqualTo(original);
		}
		finally {
			factory.destroy();
		}
	}

	private static RedisEvictionPolicyCheck check(ConfigReader config, EvictionCheck mode) {
		return new RedisEvictionPolicyCheck(config, mode);
	}

	/** One server: CONFIG GET answers the parameter under its own name. */
	private static ConfigReader standalone(String policy, String maxmemory) {
		return reader(Map.of("maxmemory-policy", policy, "maxmemory", maxmemory));
	}

	/** Answers each parameter with the entries named after it, as Spring Data Redis. */
	private static ConfigReader reader(Map<String, String> config) {
		return (parameter) -> {
			Properties answer = new Properties();
			config.forEach((name, value) -> {
				if (name.equals(parameter) || name.endsWith("." + parameter)) {
					answer.setProperty(name, value);
				}
			});
			return answer;
		};
	}

}
