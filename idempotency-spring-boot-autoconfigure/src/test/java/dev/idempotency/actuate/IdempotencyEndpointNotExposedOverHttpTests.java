package dev.idempotency.actuate;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import dev.idempotency.test.TestKeys;
import org.junit.jupiter.api.Test;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Without {@code management.endpoints.web.exposure.include=idempotency} nothing answers
 * at {@code /actuator/idempotency}, as for Boot's own endpoints: not a read, not a
 * removal.
 */
@SpringBootTest(classes = EndpointTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class IdempotencyEndpointNotExposedOverHttpTests {

	private final HttpClient http = HttpClient.newHttpClient();

	@LocalServerPort
	private int port;

	@Test
	void theEndpointIsNotExposedByDefault() throws Exception {
		for (String method : new String[] { "GET", "DELETE" }) {
			HttpResponse<String> response = this.http.send(HttpRequest
				.newBuilder(
						URI.create("http://127.0.0.1:" + this.port + "/actuator/idempotency?key=" + TestKeys.newKey()))
				.method(method, HttpRequest.BodyPublishers.noBody())
				.build(), HttpResponse.BodyHandlers.ofString());
			assertThat(response.statusCode()).as(method).isEqualTo(404);
		}
		HttpResponse<String> health = this.http.send(
				HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/actuator/health")).build(),
				HttpResponse.BodyHandlers.ofString());
		assertThat(health.statusCode()).as("the actuator itself is there").isEqualTo(200);
	}

}
