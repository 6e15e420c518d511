package dev.idempotency.web;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;

import dev.idempotency.store.memory.InMemoryIdempotencyStore;
import dev.idempotency.test.TestKeys;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An application without authentication (one scope) and the in-memory store's defaults
 * (on-full evict, a quarter per scope) under more keys than the store holds, over real
 * HTTP: no request is refused, the newest answers are replayed, and a retry of an evicted
 * key runs again.
 */
@SpringBootTest(classes = HttpDoorTestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = "idempotency.store.memory.max-entries=20")
class InMemoryStoreEvictionOverHttpTests {

	private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	@LocalServerPort
	private int port;

	@Autowired
	private HttpDoorTestApplication.GatedController controller;

	@Autowired
	private InMemoryIdempotencyStore store;

	@Test
	void aSingleScopeApplicationIsNeverRefusedAndARetryOfAnEvictedKeyRunsAgain() throws Exception {
		List<String> keys = new ArrayList<>();
		for (int i = 0; i < 60; i++) {
			String key = TestKeys.newKey();
			HttpResponse<String> response = post(key);
			assertThat(response.statusCode()).as("request " + i + ": " + response.body()).isEqualTo(200);
			keys.add(key);
		}
		assertThat(this.store.size()).isEqualTo(20);
		assertThat(this.store.evictions()).isEqualTo(40);

		HttpResponse<String> recent = post(keys.get(59));
		assertThat(recent.headers().firstValue("Idempotent-Replayed")).hasValue("true");

		int runs = this.controller.runs("echo");
		HttpResponse<String> evicted = post(keys.get(0));
		assertThat(evicted.statusCode()).isEqualTo(200);
		assertThat(evicted.headers().firstValue("Idempotent-Replayed")).as("the evicted key is new again").isEmpty();
		assertThat(this.controller.runs("echo")).isEqualTo(runs + 1);
	}

	private HttpResponse<String> post(String key) throws IOException, InterruptedException {
		return this.http.send(HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + "/echo"))
			.header("Content-Type", "text/plain")
			.header("Idempotency-Key", key)
			.POST(HttpRequest.BodyPublishers.ofString("hello"))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

}
