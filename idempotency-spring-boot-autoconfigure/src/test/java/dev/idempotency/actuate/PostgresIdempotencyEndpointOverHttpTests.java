package dev.idempotency.actuate;

import java.net.http.HttpResponse;
import java.sql.SQLException;

import dev.idempotency.test.TestKeys;
import dev.idempotency.test.servers.JdbcTestDatabase;
import dev.idempotency.test.servers.TcpProxy;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link IdempotencyEndpointOverHttpTests} on the shared PostgreSQL, in a schema of this
 * run's own, reached through a TCP proxy that can cut the store.
 */
class PostgresIdempotencyEndpointOverHttpTests extends IdempotencyEndpointOverHttpTests {

	private static JdbcTestDatabase schema;

	private static TcpProxy proxy;

	@DynamicPropertySource
	static void store(DynamicPropertyRegistry registry) throws SQLException {
		schema = JdbcTestDatabase.postgres().create();
		proxy = TcpProxy.to(schema.port());
		registry.add("idempotency.store.type", () -> "jdbc");
		registry.add("idempotency.store.jdbc.url", () -> schema.url(proxy.port()));
		registry.add("idempotency.store.jdbc.username", schema::user);
	}

	@AfterAll
	static void dropSchema() throws SQLException {
		try {
			proxy.close();
		}
		finally {
			schema.drop();
		}
	}

	/**
	 * With the store cut the endpoint answers as the doors do, 503 store-unavailable with
	 * Retry-After (it answered 500 with the store's exception), and reads again once the
	 * store is back.
	 */
	@Test
	void aCutStoreIsAnswered503WithRetryAfterAsTheDoorsAnswerIt() throws Exception {
		String key = TestKeys.newKey();
		proxy.cut();
		try {
			for (String method : new String[] { "GET", "DELETE" }) {
				HttpResponse<String> refused = send(method, query(key, "anonymous"));
				assertThat(refused.statusCode()).as(method + " " + refused.body()).isEqualTo(503);
				assertThat(refused.headers().firstValue("Retry-After")).as(method).hasValue("5");
				assertThat(refused.headers().firstValue("Content-Type")).as(method)
					.hasValueSatisfying((type) -> assertThat(type).startsWith("application/problem+json"));
				JsonNode problem = new JsonMapper().readTree(refused.body());
				assertThat(problem.get("type").asString()).endsWith("/store-unavailable");
				assertThat(problem.get("detail").asString()).contains("nothing was read or removed");
			}
		}
		finally {
			proxy.restore();
		}
		HttpResponse<String> back = send("GET", query(key, "anonymous"));
		for (int attempt = 0; attempt < 25 && back.statusCode() == 503; attempt++) {
			Thread.sleep(200);
			back = send("GET", query(key, "anonymous"));
		}
		assertThat(back.statusCode()).as("the store answers again").isEqualTo(404);
	}

}
