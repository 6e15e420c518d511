package dev.idempotency.web;

import dev.idempotency.IdempotencyRejectedException;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * Both doors refuse with one exception type: an application's handler for
 * {@link IdempotencyRejectedException} also answers the HTTP door's refusals.
 */
@SpringBootTest(classes = { WebTestApplication.class, IdempotencyRejectedExceptionAdviceTests.Advice.class })
@AutoConfigureMockMvc
class IdempotencyRejectedExceptionAdviceTests {

	@Autowired
	private MockMvc mvc;

	@Test
	void theHttpDoorsRefusalIsTheExceptionAUserCatches() throws Exception {
		this.mvc
			.perform(post("/things").contentType(MediaType.APPLICATION_JSON)
				.content("{\"name\":\"a\"}")
				.header("Idempotency-Key", "not-a-key"))
			.andExpect(status().isIAmATeapot())
			.andExpect(content().string("caught invalid-key"));
	}

	@RestControllerAdvice
	static class Advice {

		@ExceptionHandler
		ResponseEntity<String> refused(IdempotencyRejectedException ex) {
			return ResponseEntity.status(418).body("caught " + ex.error().type().slug());
		}

	}

}
