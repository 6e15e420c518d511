package dev.idempotency.method;

import dev.idempotency.IdempotencyRejectedException;
import dev.idempotency.core.IdempotencyErrorType;
import dev.idempotency.web.IdempotencyErrorRenderer;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webmvc.test.autoconfigure.AutoConfigureMockMvc;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * An application's {@link IdempotencyErrorRenderer} answers the refusals of both doors,
 * before its catch-all advice; outside a web request the method door's refusal is the
 * {@link IdempotencyRejectedException} the caller catches.
 */
@SpringBootTest(classes = { MethodDoorWebTestApplication.class, MethodDoorWithRendererTests.OwnShape.class })
@AutoConfigureMockMvc
class MethodDoorWithRendererTests {

	@Autowired
	private MockMvc mvc;

	@Autowired
	private MethodDoorWebTestApplication.Payments payments;

	@Test
	void aHandlerMethodsRefusalIsAnsweredByTheRenderer() throws Exception {
		order("r-1", "book").andExpect(status().isOk());
		order("r-1", "pen").andExpect(status().isUnprocessableContent())
			.andExpect(content().contentType(MediaType.TEXT_PLAIN))
			.andExpect(content().string("own key-reused"));
	}

	@Test
	void aServiceRefusalBehindAHandlerIsAnsweredByTheRenderer() throws Exception {
		charge("r-2", 100).andExpect(status().isOk());
		charge("r-2", 999).andExpect(status().isUnprocessableContent()).andExpect(content().string("own key-reused"));
	}

	@Test
	void theHttpDoorsRefusalIsAnsweredByTheRenderer() throws Exception {
		this.mvc
			.perform(post("/bookings").contentType(MediaType.APPLICATION_JSON)
				.content("{\"id\":\"r-3\"}")
				.header("Idempotency-Key", "not-a-key"))
			.andExpect(status().isBadRequest())
			.andExpect(content().string("own invalid-key"));
	}

	@Test
	void outsideAWebRequestTheCallerCatchesTheRefusal() {
		this.payments.pay(new MethodDoorWebTestApplication.Charge("r-4", 100));
		assertThatExceptionOfType(IdempotencyRejectedException.class)
			.isThrownBy(() -> this.payments.pay(new MethodDoorWebTestApplication.Charge("r-4", 999)))
			.satisfies((ex) -> {
				assertThat(ex.error().type()).isEqualTo(IdempotencyErrorType.KEY_REUSED);
				assertThat(ex.getStatusCode().value()).isEqualTo(422);
			});
	}

	private org.springframework.test.web.servlet.ResultActions order(String id, String item) throws Exception {
		return this.mvc.perform(post("/orders").contentType(MediaType.APPLICATION_JSON)
			.content("{\"requestId\":\"" + id + "\",\"item\":\"" + item + "\"}"));
	}

	private org.springframework.test.web.servlet.ResultActions charge(String id, int cents) throws Exception {
		return this.mvc.perform(post("/charges").contentType(MediaType.APPLICATION_JSON)
			.content("{\"orderId\":\"" + id + "\",\"cents\":" + cents + "}"));
	}

	@Configuration(proxyBeanMethods = false)
	static class OwnShape {

		@Bean
		IdempotencyErrorRenderer ownRenderer() {
			return (error, request, response) -> {
				response.setStatus(error.status());
				response.setContentType(MediaType.TEXT_PLAIN_VALUE);
				response.getWriter().write("own " + error.type().slug());
			};
		}

		@Bean
		CatchAll catchAll() {
			return new CatchAll();
		}

	}

	/** Like the sample catalog's: would answer every exception if it saw them first. */
	@RestControllerAdvice
	static class CatchAll {

		@ExceptionHandler
		ResponseEntity<String> any(Exception ex) {
			return ResponseEntity.status(500).body("advice " + ex.getClass().getSimpleName());
		}

	}

}
