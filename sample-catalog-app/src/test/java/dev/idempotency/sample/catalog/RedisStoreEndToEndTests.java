package dev.idempotency.sample.catalog;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import dev.idempotency.sample.catalog.support.CatalogHttp.Response;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.api.StatefulRedisConnection;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.context.TestPropertySource;

/**
 * The Redis store on the shared Redis server (127.0.0.1:6379), under a key prefix of this
 * context's own whose keys the class deletes at the end; the catalog itself stays on H2.
 * Lease mode; {@link RedisStoreRecordAfterSuccessTests} runs the same in
 * record-after-success mode, under a prefix of its own. Two scan plans may be live, so
 * that a plan left behind shows.
 */
@TestPropertySource(properties = "catalog.scan-planning.max-live-plans=2")
class RedisStoreEndToEndTests extends SharedStoreEndToEndTests {

	/** The key prefix of the class running now (test classes run one after another). */
	private static String prefix;

	@DynamicPropertySource
	static void store(DynamicPropertyRegistry registry) {
		String own = "idem-e2e-" + UUID.randomUUID() + ":";
		prefix = own;
		registry.add("idempotency.store.type", () -> "redis");
		registry.add("idempotency.store.redis.key-prefix", () -> own);
		registry.add("spring.data.redis.host", () -> "127.0.0.1");
		registry.add("spring.data.redis.port", () -> "6379");
	}

	@AfterAll
	static void deleteOwnKeys() {
		List<String> keys = ownKeys();
		if (!keys.isEmpty()) {
			withRedis((redis) -> redis.sync().del(keys.toArray(String[]::new)));
		}
	}

	/**
	 * A retry of a keyed plan request while the first attempt plans, with the answers
	 * recorded in Redis, outside the catalog's transactions: in record-after-success mode
	 * the first attempt's plan commits before its answer loses to the retry's, and must
	 * be released all the same. One plan is live: one more fits, the next is refused.
	 */
	@Test
	void aRetryWhileTheFirstAttemptPlansLeavesOnePlanLive() throws Exception {
		String namespace = "plans_" + storeTag();
		this.http.post("/v1/namespaces", "{\"namespace\":[\"" + namespace + "\"]}");
		this.http.post("/v1/namespaces/" + namespace + "/tables", "{\"name\":\"events\",\"schema\":{\"type\":"
				+ "\"struct\",\"schema-id\":0,\"fields\":[{\"id\":1,\"name\":\"id\",\"required\":true,\"type\":\"long\"}]}}");
		String plan = "/v1/namespaces/" + namespace + "/tables/events/plan";
		List<String> plans = new ArrayList<>();
		try {
			plans.add(
					ScanPlanningTests.retryWhileTheFirstAttemptPlans(this.http, this.gate, plan, recordAfterSuccess()));
			Response second = this.http.post(plan, "{}", "Idempotency-Key", ScanPlanningTests.newKey());
			assertThat(second.status()).as(second.toString()).isEqualTo(200);
			plans.add(second.json().path("plan-id").asText());
			Response full = this.http.post(plan, "{}", "Idempotency-Key", ScanPlanningTests.newKey());
			assertThat(full.status()).as(full.toString()).isEqualTo(503);
		}
		finally {
			plans.forEach(planId -> this.http.delete(plan + "/" + planId));
		}
	}

	@Override
	String expectedStore() {
		return "redis";
	}

	@Override
	protected long recordsInStore() {
		return ownKeys().size();
	}

	private static List<String> ownKeys() {
		List<String> keys = new ArrayList<>();
		withRedis((redis) -> {
			ScanCursor cursor = ScanCursor.INITIAL;
			do {
				KeyScanCursor<String> page = redis.sync()
					.scan(cursor, ScanArgs.Builder.matches(prefix + "*").limit(500));
				keys.addAll(page.getKeys());
				cursor = page;
			}
			while (!cursor.isFinished());
			return null;
		});
		return keys;
	}

	private static <T> T withRedis(java.util.function.Function<StatefulRedisConnection<String, String>, T> action) {
		RedisClient client = RedisClient.create("redis://127.0.0.1:6379");
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			return action.apply(connection);
		}
		finally {
			client.shutdown();
		}
	}

}
