package dev.idempotency.autoconfigure.jdbc.firstcontact;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import dev.idempotency.test.TestKeys;
import dev.idempotency.test.servers.JdbcTestDatabase;
import dev.idempotency.test.servers.TcpProxy;
import org.junit.jupiter.api.Test;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A PostgreSQL store cut under a running application (a TCP proxy that closes every
 * connection and refuses new ones), with the store's default timeouts: the keyed request
 * is answered 503 in about the dedicated pool's connection timeout, not after Hikari's 30
 * s default. The bound asserted is generous; the measured time is printed
 * (docs/failure-modes.md quotes it).
 */
class JdbcStoreCutTests {

	private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

	@Test
	void aCutStoreIsAnswered503WithinTheDefaultTimeoutsNotAfterThirtySeconds() throws Exception {
		JdbcTestDatabase database = JdbcTestDatabase.postgres().create();
		try (TcpProxy proxy = TcpProxy.to(database.port());
				ConfigurableApplicationContext app = new SpringApplicationBuilder(FirstContactApplication.class).run(
						"--server.port=0", "--idempotency.store.type=jdbc",
						"--idempotency.store.jdbc.url=" + database.url(proxy.port()),
						"--idempotency.store.jdbc.username=" + database.user())) {
			URI orders = URI
				.create("http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port") + "/orders");
			assertThat(post(orders, TestKeys.newKey()).statusCode()).isEqualTo(201);

			proxy.cut();
			long start = System.nanoTime();
			HttpResponse<String> refused = post(orders, TestKeys.newKey());
			Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
			System.out.println("JdbcStoreCutTests: 503 after " + elapsed.toMillis() + " ms");

			assertThat(refused.statusCode()).isEqualTo(503);
			assertThat(refused.headers().firstValue("Retry-After")).isPresent();
			assertThat(elapsed).as("answered well before Hikari's 30 s default").isLessThan(Duration.ofSeconds(10));

			// The pool's connections are gone now: this one waits for a new connection.
			start = System.nanoTime();
			HttpResponse<String> refusedAgain = post(orders, TestKeys.newKey());
			elapsed = Duration.ofNanos(System.nanoTime() - start);
			System.out.println("JdbcStoreCutTests: next 503 after " + elapsed.toMillis() + " ms");
			assertThat(refusedAgain.statusCode()).isEqualTo(503);
			assertThat(elapsed).as("answered well before Hikari's 30 s default").isLessThan(Duration.ofSeconds(10));

			proxy.restore();
			assertThat(postUntilNot503(orders, TestKeys.newKey()).statusCode()).isEqualTo(201);
		}
		finally {
			database.drop();
		}
	}

	private HttpResponse<String> postUntilNot503(URI orders, String key) throws Exception {
		HttpResponse<String> response = post(orders, key);
		for (int attempt = 0; attempt < 50 && response.statusCode() == 503; attempt++) {
			Thread.sleep(200);
			response = post(orders, key);
		}
		return response;
	}

	private HttpResponse<String> post(URI uri, String key) throws Exception {
		return this.http.send(HttpRequest.newBuilder(uri)
			.timeout(Duration.ofSeconds(60))
			.header("Idempotency-Key", key)
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString("{\"item\":\"book\"}"))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

}
