package dev.idempotency.autoconfigure.jdbc.firstcontact;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import dev.idempotency.test.TestKeys;
import dev.idempotency.test.servers.JdbcTestDatabase;
import org.junit.jupiter.api.Test;

import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Exactly what a new user does: a fresh application on PostgreSQL (a schema of its own,
 * as a fresh database would be), {@code idempotency.store.type=jdbc} and nothing else, a
 * real server on a random port. The first start already protects the POST.
 */
class JdbcFirstContactTests {

	private final HttpClient http = HttpClient.newHttpClient();

	@Test
	void aFreshPostgresAppProtectsAPostOnItsFirstStart() throws Exception {
		JdbcTestDatabase database = JdbcTestDatabase.postgres().create();
		try (ConfigurableApplicationContext app = new SpringApplicationBuilder(FirstContactApplication.class).run(
				"--server.port=0", "--spring.datasource.url=" + database.url(), "--spring.datasource.username=postgres",
				"--idempotency.store.type=jdbc")) {
			URI orders = URI
				.create("http://127.0.0.1:" + app.getEnvironment().getProperty("local.server.port") + "/orders");
			String key = TestKeys.newKey();

			HttpResponse<String> first = post(orders, key);
			HttpResponse<String> second = post(orders, key);

			assertThat(first.statusCode()).isEqualTo(201);
			assertThat(first.body()).isEqualTo("{\"order\":1}");
			assertThat(second.statusCode()).isEqualTo(201);
			assertThat(second.body()).isEqualTo("{\"order\":1}");
			assertThat(second.headers().firstValue("Idempotent-Replayed")).hasValue("true");
			assertThat(app.getBean(FirstContactApplication.OrderController.class).runs()).isEqualTo(1);
		}
		finally {
			database.drop();
		}
	}

	private HttpResponse<String> post(URI uri, String key) throws Exception {
		return this.http.send(HttpRequest.newBuilder(uri)
			.header("Idempotency-Key", key)
			.header("Content-Type", "application/json")
			.POST(HttpRequest.BodyPublishers.ofString("{\"item\":\"book\"}"))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

}
