package dev.idempotency.web;

import dev.idempotency.test.TestKeys;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.MvcResult;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * The default answer to a refusal is written by Spring MVC's message converters, so the
 * application's JSON settings apply to it (here: indented output).
 */
@SpringBootTest(classes = WebTestApplication.class, properties = "spring.jackson.serialization.indent-output=true")
@AutoConfigureMockMvc
class IdempotencyErrorRenderingTests {

	private static final String PROBLEM = "https://idempotency.dev/problems/";

	@Autowired
	private MockMvc mvc;

	@Autowired
	private WebTestApplication.SwitchableStore store;

	@AfterEach
	void storeUp() {
		this.store.down = false;
	}

	@Test
	void aRefusalIsWrittenByTheApplicationsJsonMapper() throws Exception {
		MvcResult result = this.mvc
			.perform(post("/things").contentType(MediaType.APPLICATION_JSON)
				.content("{\"name\":\"a\"}")
				.header("Idempotency-Key", "not-a-key"))
			.andExpect(status().isBadRequest())
			.andExpect(content().contentType(MediaType.APPLICATION_PROBLEM_JSON))
			.andExpect(jsonPath("$.type").value(PROBLEM + "invalid-key"))
			.andExpect(jsonPath("$.title").value("Invalid idempotency key"))
			.andExpect(jsonPath("$.status").value(400))
			.andExpect(jsonPath("$.detail").isNotEmpty())
			.andExpect(jsonPath("$.instance").value("/things"))
			.andReturn();
		assertThat(result.getResponse().getContentAsString()).as("indented by the application's JsonMapper")
			.startsWith("{\n  \"");
	}

	@Test
	void theStoreUnavailableRefusalKeepsItsRetryAfter() throws Exception {
		this.store.down = true;
		this.mvc
			.perform(post("/things").contentType(MediaType.APPLICATION_JSON)
				.content("{\"name\":\"b\"}")
				.header("Idempotency-Key", TestKeys.newKey()))
			.andExpect(status().isServiceUnavailable())
			.andExpect(header().string("Retry-After", "5"))
			.andExpect(content().contentType(MediaType.APPLICATION_PROBLEM_JSON))
			.andExpect(jsonPath("$.type").value(PROBLEM + "store-unavailable"))
			.andExpect(jsonPath("$.status").value(503));
	}

}
