package dev.idempotency.web;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;

import dev.idempotency.test.TestKeys;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.MockMvc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/** The opt-in policies: fail-open, warn-only key age, 503 for in-flight duplicates. */
@SpringBootTest(classes = WebTestApplication.class,
		properties = { "idempotency.store.failure-mode=fail-open", "idempotency.key-age-policy=warn",
				"idempotency.in-flight.status=service-unavailable", "idempotency.in-flight.wait=0s",
				"idempotency.in-flight.retry-after=3s" })
@AutoConfigureMockMvc
class IdempotencyWebLenientPolicyTests {

	@Autowired
	private MockMvc mvc;

	@Autowired
	private WebTestApplication.ThingController controller;

	@Autowired
	private WebTestApplication.SwitchableStore store;

	@AfterEach
	void reset() {
		this.store.down = false;
		this.controller.reset();
	}

	@Test
	void failOpenRunsUnprotectedWhileTheStoreIsDown() throws Exception {
		this.store.down = true;
		String key = TestKeys.newKey();
		for (int i = 0; i < 2; i++) {
			this.mvc
				.perform(post("/things").contentType(MediaType.APPLICATION_JSON)
					.content("{\"name\":\"x\"}")
					.header("Idempotency-Key", key))
				.andExpect(status().isCreated())
				.andExpect(header().doesNotExist("Idempotent-Replayed"));
		}
		assertThat(this.controller.runs("create")).isEqualTo(2);
	}

	@Test
	void warnOnlyAcceptsAnOldKey() throws Exception {
		String old = TestKeys.at(Instant.now().minus(Duration.ofHours(2)));
		this.mvc.perform(post("/status/201").header("Idempotency-Key", old)).andExpect(status().isCreated());
		this.mvc.perform(post("/status/201").header("Idempotency-Key", old))
			.andExpect(header().string("Idempotent-Replayed", "true"));
		assertThat(this.controller.runs("status-201")).isEqualTo(1);
	}

	@Test
	void anInFlightDuplicateCanBeAnswered503WithRetryAfter() throws Exception {
		String key = TestKeys.newKey();
		CompletableFuture<Integer> first = CompletableFuture.supplyAsync(() -> {
			try {
				return this.mvc.perform(post("/slow").param("millis", "1500").header("Idempotency-Key", key))
					.andReturn()
					.getResponse()
					.getStatus();
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
		});
		while (this.controller.runs("slow") < 1) {
			Thread.sleep(5);
		}
		this.mvc.perform(post("/slow").param("millis", "1500").header("Idempotency-Key", key))
			.andExpect(status().isServiceUnavailable())
			.andExpect(header().string("Retry-After", "3"))
			.andExpect(jsonPath("$.type").value("https://idempotency.dev/problems/request-in-flight"));
		assertThat(first.get()).isEqualTo(200);
		assertThat(this.controller.runs("slow")).isEqualTo(1);
	}

}
