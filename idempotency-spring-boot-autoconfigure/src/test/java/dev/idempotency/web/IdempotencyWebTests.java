package dev.idempotency.web;

import dev.idempotency.test.TestKeys;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.client.MockMvcWebTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * The protocol table through the HTTP front door on Spring MVC ({@link MockMvc}), and
 * what only Spring MVC has: an answer marked not stored through a request attribute, and
 * an unhandled exception that reaches the caller.
 */
@SpringBootTest(classes = WebTestApplication.class,
		properties = { AbstractIdempotencyWebTests.PROPERTIES_PATTERN, AbstractIdempotencyWebTests.PROPERTIES_WAIT,
				AbstractIdempotencyWebTests.PROPERTIES_MAX_BODY })
@AutoConfigureMockMvc
class IdempotencyWebTests extends AbstractIdempotencyWebTests {

	@Autowired
	private MockMvc mvc;

	@Override
	WebTestClient client() {
		return MockMvcWebTestClient.bindTo(this.mvc).build();
	}

	@Test
	void anAnswerTheApplicationMarksNotStoredIsSentAndItsRetryRunsAgain() throws Exception {
		String key = TestKeys.newKey();
		for (int run = 1; run <= 2; run++) {
			this.mvc.perform(post("/not-stored").header("Idempotency-Key", key))
				.andExpect(status().isOk())
				.andExpect(jsonPath("$.run").value(run))
				.andExpect(header().doesNotExist("Idempotent-Replayed"));
		}
		assertThat(this.controller.runs("not-stored")).isEqualTo(2);
	}

	@Test
	void anUnhandledExceptionIsReleased() {
		String key = TestKeys.newKey();
		for (int i = 0; i < 2; i++) {
			assertThatExceptionOfType(Exception.class)
				.isThrownBy(() -> this.mvc.perform(post("/throw").header("Idempotency-Key", key)))
				.withRootCauseInstanceOf(IllegalStateException.class);
		}
		assertThat(this.controller.runs("throw")).isEqualTo(2);
	}

}
