package dev.idempotency.web;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import dev.idempotency.test.TestKeys;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An asynchronous handler whose request times out while its operation still runs: the
 * operation may yet finish, so its key is not released (a retry would run it beside the
 * first); the retry is told it is in flight until the lease runs out.
 */
@SpringBootTest(classes = HttpDoorTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "spring.mvc.async.request-timeout=300ms", "idempotency.in-flight.wait=0s" })
class AsyncTimeoutOverHttpTests {

	private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	@LocalServerPort
	private int port;

	@Autowired
	private HttpDoorTestApplication.GatedController controller;

	@Test
	void aTimedOutAsynchronousRequestKeepsItsKeyWhileItsOperationMayStillRun() throws Exception {
		String key = TestKeys.newKey();
		try {
			HttpResponse<String> timedOut = this.http.send(keyed(key), HttpResponse.BodyHandlers.ofString());
			assertThat(timedOut.statusCode()).isEqualTo(503);

			HttpResponse<String> retry = this.http.send(keyed(key), HttpResponse.BodyHandlers.ofString());
			assertThat(retry.statusCode()).as(retry.body()).isEqualTo(409);
			assertThat(retry.body()).contains("request-in-flight");
			assertThat(this.controller.runs(key)).isEqualTo(1);
		}
		finally {
			this.controller.open(key);
		}
	}

	private HttpRequest keyed(String key) {
		return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + this.port + "/async/deferred"))
			.header("Idempotency-Key", key)
			.header("X-Gate", key)
			.timeout(Duration.ofSeconds(30))
			.POST(HttpRequest.BodyPublishers.noBody())
			.build();
	}

}
