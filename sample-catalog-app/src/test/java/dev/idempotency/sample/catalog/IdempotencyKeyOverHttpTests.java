package dev.idempotency.sample.catalog;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Map;

import dev.idempotency.sample.catalog.support.CatalogHttp;
import dev.idempotency.sample.catalog.support.CatalogHttp.Response;
import dev.idempotency.sample.catalog.iceberg.SampleCatalogProperties;
import dev.idempotency.sample.catalog.security.SecurityConfiguration;
import dev.idempotency.sample.catalog.support.CatalogServerTestSupport;
import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.rest.RESTCatalog;
import org.apache.iceberg.rest.RESTUtil;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.actuate.autoconfigure.endpoint.web.WebEndpointProperties;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.test.context.TestPropertySource;

/**
 * The Idempotency-Key behaviour on the wire, with bearer-token authentication on:
 * replays, key reuse, errors in Iceberg's shape, keys scoped by principal and catalog
 * prefix, and the starter's operator endpoint (exposed here) open to operator tokens
 * only.
 */
@TestPropertySource(properties = { "catalog.auth.enabled=true", "catalog.auth.tokens.token-of-alice=alice",
		"catalog.auth.tokens.token-of-bob=bob", "catalog.auth.operator-tokens.token-of-olivia=olivia",
		"management.endpoints.web.exposure.include=health,idempotency" })
class IdempotencyKeyOverHttpTests extends CatalogServerTestSupport {

	private static final String[] ALICE = { "Authorization", "Bearer token-of-alice" };

	private static final String[] OPERATOR = { "Authorization", "Bearer token-of-olivia" };

	private CatalogHttp http;

	@BeforeEach
	void connect() {
		this.http = new CatalogHttp(catalogUri());
	}

	@Test
	void requestsWithoutAKnownTokenAreRefused() {
		Response missing = this.http.get("/v1/config");
		assertThat(missing.status()).isEqualTo(401);
		assertThat(missing.errorType()).isEqualTo("NotAuthorizedException");
		Response unknown = this.http.get("/v1/config", "Authorization", "Bearer guessed");
		assertThat(unknown.status()).isEqualTo(401);
		assertThat(this.http.get("/v1/config", ALICE).status()).isEqualTo(200);
	}

	@Test
	void theIcebergClientAuthenticatesWithItsToken() throws Exception {
		try (RESTCatalog client = connect(catalogUri(), Map.of("token", "token-of-alice"))) {
			client.createNamespace(Namespace.of("authenticated"));
			assertThat(client.namespaceExists(Namespace.of("authenticated"))).isTrue();
		}
	}

	@Test
	void aRetryWithTheSameKeyGetsTheSameAnswerReplayed() {
		String key = key();
		Response first = createNamespace("replayed", key, ALICE);
		Response retry = createNamespace("replayed", key, ALICE);

		assertThat(first.status()).isEqualTo(200);
		assertThat(first.header("Idempotent-Replayed")).isNull();
		assertThat(retry.status()).isEqualTo(200);
		assertThat(retry.header("Idempotent-Replayed")).isEqualTo("true");
		assertThat(retry.body()).isEqualTo(first.body());
	}

	@Test
	void aFinalConflictIsReplayedToo() {
		createNamespace("taken", key(), ALICE);
		String key = key();
		Response conflict = createNamespace("taken", key, ALICE);
		Response retry = createNamespace("taken", key, ALICE);

		assertThat(conflict.status()).isEqualTo(409);
		assertThat(retry.status()).isEqualTo(409);
		assertThat(retry.errorType()).isEqualTo("AlreadyExistsException");
		assertThat(retry.header("Idempotent-Replayed")).isEqualTo("true");
	}

	@Test
	void theSameKeyForAnotherRequestIsRefusedInIcebergsErrorShape() {
		String key = key();
		createNamespace("first_use", key, ALICE);
		Response reused = createNamespace("second_use", key, ALICE);

		assertThat(reused.status()).isEqualTo(422);
		assertThat(reused.errorType()).isEqualTo("IdempotencyKeyReusedException");
		assertThat(reused.json().path("error").path("code").asInt()).isEqualTo(422);
		assertThat(this.http.head("/v1/namespaces/second_use", ALICE).status()).isEqualTo(404);
	}

	@Test
	void anInvalidKeyIsABadRequest() {
		Response invalid = createNamespace("invalid_key", "not-a-uuid", ALICE);
		assertThat(invalid.status()).isEqualTo(400);
		assertThat(invalid.errorType()).isEqualTo("InvalidIdempotencyKeyException");
	}

	@Test
	void aKeyedBodyOverTheReadLimitIsRefusedInIcebergsErrorShape() {
		String padding = "x".repeat(1024 * 1024);
		Response tooLarge = this.http.post("/v1/namespaces",
				"{\"namespace\": [\"too_large\"], \"properties\": {\"padding\": \"" + padding + "\"}}",
				"Idempotency-Key", key(), ALICE[0], ALICE[1]);
		assertThat(tooLarge.status()).isEqualTo(413);
		assertThat(tooLarge.errorType()).isEqualTo("IdempotentRequestTooLargeException");
		assertThat(this.http.head("/v1/namespaces/too_large", ALICE).status()).isEqualTo(404);
	}

	@Test
	void keysAreScopedByPrincipalAndByPrefix() {
		String key = key();
		Response alice = createNamespace("scoped_alice", key, ALICE);
		Response bob = this.http.post("/v1/namespaces", "{\"namespace\": [\"scoped_bob\"]}", "Idempotency-Key", key,
				"Authorization", "Bearer token-of-bob");
		Response otherPrefix = this.http.post("/v1/other/namespaces", "{\"namespace\": [\"scoped_prefix\"]}",
				"Idempotency-Key", key, ALICE[0], ALICE[1]);

		assertThat(alice.status()).isEqualTo(200);
		assertThat(bob.status()).as("bob's key is not alice's").isEqualTo(200);
		assertThat(bob.header("Idempotent-Replayed")).isNull();
		assertThat(otherPrefix.status()).as("another catalog prefix is another scope").isEqualTo(200);
		assertThat(otherPrefix.header("Idempotent-Replayed")).isNull();
	}

	/**
	 * The operator endpoint can remove any principal's key: without an operator token it
	 * is refused (401, and 403 for a catalog principal), and the key stays; an operator
	 * reads and removes it, after which the key's retry runs again. Health stays open.
	 */
	@Test
	void onlyAnOperatorReachesTheIdempotencyEndpoint() {
		String key = key();
		assertThat(createNamespace("operated", key, ALICE).status()).isEqualTo(200);
		String record = "/actuator/idempotency?key=" + key + "&scope="
				+ URLEncoder.encode("principal=alice;prefix=", StandardCharsets.UTF_8);

		Response anonymous = this.http.delete(record);
		assertThat(anonymous.status()).as(anonymous.toString()).isEqualTo(401);
		assertThat(anonymous.errorType()).isEqualTo("NotAuthorizedException");
		assertThat(anonymous.header("WWW-Authenticate")).isEqualTo("Bearer");
		Response asAlice = this.http.delete(record, ALICE);
		assertThat(asAlice.status()).as(asAlice.toString()).isEqualTo(403);
		assertThat(asAlice.errorType()).isEqualTo("ForbiddenException");
		assertThat(this.http.get(record).status()).isEqualTo(401);
		assertThat(this.http.get("/actuator", ALICE).status()).isEqualTo(403);
		Response kept = createNamespace("operated", key, ALICE);
		assertThat(kept.status()).isEqualTo(200);
		assertThat(kept.header("Idempotent-Replayed")).as("the record is still there").isEqualTo("true");

		Response health = this.http.get("/actuator/health");
		assertThat(health.status()).as(health.toString()).isEqualTo(200);
		Response throughHealth = this.http
			.get("/actuator/health/../idempotency" + record.substring(record.indexOf('?')));
		assertThat(throughHealth.status()).as(throughHealth.toString()).isEqualTo(401);

		Response read = this.http.get(record, OPERATOR);
		assertThat(read.status()).as(read.toString()).isEqualTo(200);
		assertThat(read.json().path("records").path(0).path("state").asText()).isEqualTo("completed");
		Response removed = this.http.delete(record, OPERATOR);
		assertThat(removed.status()).as(removed.toString()).isEqualTo(204);
		Response ranAgain = createNamespace("operated", key, ALICE);
		assertThat(ranAgain.status()).as("the retry ran again and found the namespace").isEqualTo(409);
		assertThat(ranAgain.header("Idempotent-Replayed")).isNull();
		Response operatorOnCatalog = this.http.get("/v1/config", OPERATOR);
		assertThat(operatorOnCatalog.status()).as("an operator token is not a catalog token").isEqualTo(403);
		assertThat(operatorOnCatalog.errorType()).isEqualTo("ForbiddenException");
	}

	/**
	 * On a management port of its own the actuator runs in a child context that the
	 * operator filter does not reach: the start fails, naming the setting, instead of
	 * leaving the endpoints open.
	 */
	@Test
	void anActuatorOnAPortOfItsOwnFailsTheStartInsteadOfStayingOpen() {
		new ApplicationContextRunner().withUserConfiguration(SecurityConfiguration.class)
			.withBean(SampleCatalogProperties.class)
			.withBean(WebEndpointProperties.class)
			.withPropertyValues("catalog.auth.enabled=true", "management.server.port=9090")
			.run(context -> assertThat(context).getFailure()
				.rootCause()
				.hasMessageContaining("management.server.port"));
	}

	private Response createNamespace(String name, String key, String... auth) {
		return this.http.post("/v1/namespaces", "{\"namespace\": [\"" + name + "\"]}", "Idempotency-Key", key, auth[0],
				auth[1]);
	}

	/** A fresh UUIDv7, as Iceberg's client makes them. */
	private static String key() {
		return RESTUtil.idempotencyHeaders().get(RESTUtil.IDEMPOTENCY_KEY_HEADER);
	}

}
