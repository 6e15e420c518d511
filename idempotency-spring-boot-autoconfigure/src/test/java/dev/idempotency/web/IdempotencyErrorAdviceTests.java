package dev.idempotency.web;

import dev.idempotency.test.TestKeys;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.web.bind.annotation.RestControllerAdvice;
import org.springframework.web.context.request.WebRequest;
import org.springframework.web.servlet.mvc.method.annotation.ResponseEntityExceptionHandler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * An application's {@code ResponseEntityExceptionHandler} renders the door's refusals:
 * they are {@link dev.idempotency.IdempotencyRejectedException}s carrying the problem
 * detail and {@code Retry-After}.
 */
@SpringBootTest(classes = { WebTestApplication.class, IdempotencyErrorAdviceTests.ApplicationAdvice.class })
@AutoConfigureMockMvc
class IdempotencyErrorAdviceTests {

	private static final String PROBLEM = "https://idempotency.dev/problems/";

	@Autowired
	private MockMvc mvc;

	@Autowired
	private WebTestApplication.SwitchableStore store;

	@Autowired
	private WebTestApplication.ThingController controller;

	@AfterEach
	void storeUp() {
		this.store.down = false;
		this.controller.reset();
	}

	@Test
	void anInvalidKeyIsRenderedByTheApplicationsAdvice() throws Exception {
		this.mvc
			.perform(post("/things").contentType(MediaType.APPLICATION_JSON)
				.content("{\"name\":\"a\"}")
				.header("Idempotency-Key", "not-a-key"))
			.andExpect(status().isBadRequest())
			.andExpect(content().contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON))
			.andExpect(jsonPath("$.type").value(PROBLEM + "invalid-key"))
			.andExpect(jsonPath("$.title").value("Invalid idempotency key"))
			.andExpect(jsonPath("$.status").value(400))
			.andExpect(jsonPath("$.detail").isNotEmpty())
			.andExpect(jsonPath("$.instance").value("/things"))
			.andExpect(jsonPath("$.renderedBy").value("application"));
		assertThat(this.controller.runs("create")).isZero();
	}

	@Test
	void theStoreUnavailableRefusalKeepsItsRetryAfterThroughTheAdvice() throws Exception {
		this.store.down = true;
		this.mvc
			.perform(post("/things").contentType(MediaType.APPLICATION_JSON)
				.content("{\"name\":\"b\"}")
				.header("Idempotency-Key", TestKeys.newKey()))
			.andExpect(status().isServiceUnavailable())
			.andExpect(header().string("Retry-After", "5"))
			.andExpect(jsonPath("$.type").value(PROBLEM + "store-unavailable"))
			.andExpect(jsonPath("$.renderedBy").value("application"));
		assertThat(this.controller.runs("create")).isZero();
	}

	@RestControllerAdvice
	static class ApplicationAdvice extends ResponseEntityExceptionHandler {

		@Override
		protected ResponseEntity<Object> handleExceptionInternal(Exception ex, Object body, HttpHeaders headers,
				HttpStatusCode statusCode, WebRequest request) {
			ResponseEntity<Object> entity = super.handleExceptionInternal(ex, body, headers, statusCode, request);
			if (entity != null && entity.getBody() instanceof ProblemDetail problem) {
				problem.setProperty("renderedBy", "application");
			}
			return entity;
		}

	}

}
