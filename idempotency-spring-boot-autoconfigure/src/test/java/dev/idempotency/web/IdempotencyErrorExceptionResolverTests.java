package dev.idempotency.web;

import java.time.Duration;
import java.util.List;

import dev.idempotency.IdempotencyRejectedException;
import dev.idempotency.core.IdempotencyError;
import dev.idempotency.core.IdempotencyErrorType;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.http.converter.StringHttpMessageConverter;
import org.springframework.http.converter.json.JacksonJsonHttpMessageConverter;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

import static org.assertj.core.api.Assertions.assertThat;

class IdempotencyErrorExceptionResolverTests {

	private static final JsonMapper JSON = new JsonMapper();

	private final IdempotencyErrorExceptionResolver resolver = new IdempotencyErrorExceptionResolver(
			() -> List.of(new StringHttpMessageConverter(), new JacksonJsonHttpMessageConverter()), null);

	@Test
	void quotesBackslashesControlCharactersAndUnicodeComeBackAsTheyWere() throws Exception {
		String detail = "key \"a\\b\" in scope 'tenant\u00e9' \t\n\r\u0001\u001f \u2028 \u00fc\u4e2d \ud83d\ude00 </script>";
		MockHttpServletResponse response = resolve(new IdempotencyRejectedException(
				IdempotencyError.of(IdempotencyErrorType.KEY_REUSED, detail), "urn:problems:"), "/things/\u00e9");
		assertThat(response.getStatus()).isEqualTo(422);
		assertThat(response.getContentType()).isEqualTo("application/problem+json");
		JsonNode problem = JSON.readTree(response.getContentAsByteArray());
		assertThat(problem.get("detail").asString()).isEqualTo(detail);
		assertThat(problem.get("type").asString()).isEqualTo("urn:problems:key-reused");
		assertThat(problem.get("title").asString()).isEqualTo(IdempotencyErrorType.KEY_REUSED.title());
		assertThat(problem.get("status").asInt()).isEqualTo(422);
		assertThat(problem.get("instance").asString()).isEqualTo("/things/\u00e9");
		assertThat(response.getHeader("Retry-After")).isNull();
	}

	@Test
	void aRetryAfterIsSentInWholeSecondsAtLeastOne() throws Exception {
		MockHttpServletResponse response = resolve(new IdempotencyRejectedException(
				new IdempotencyError(IdempotencyErrorType.STORE_UNAVAILABLE, 503, "down", Duration.ofMillis(300))),
				"/things");
		assertThat(response.getStatus()).isEqualTo(503);
		assertThat(response.getHeaders("Retry-After")).containsExactly("1");
		assertThat(JSON.readTree(response.getContentAsByteArray()).get("type").asString())
			.isEqualTo(IdempotencyRejectedException.DEFAULT_PROBLEM_TYPE_BASE + "store-unavailable");
	}

	@Test
	void anApplicationsRendererAnswersInsteadWithTheRetryAfterAlreadySet() throws Exception {
		IdempotencyErrorExceptionResolver own = new IdempotencyErrorExceptionResolver(List::of,
				(error, request, response) -> {
					response.setStatus(error.status());
					response.setContentType("text/plain");
					response.getWriter().write(error.type().slug() + " after " + response.getHeader("Retry-After"));
				});
		MockHttpServletRequest request = new MockHttpServletRequest("POST", "/things");
		MockHttpServletResponse response = new MockHttpServletResponse();
		assertThat(own.resolveException(request, response, null, new IdempotencyRejectedException(
				new IdempotencyError(IdempotencyErrorType.REQUEST_IN_FLIGHT, 503, "busy", Duration.ofSeconds(2)))))
			.isNotNull();
		assertThat(response.getStatus()).isEqualTo(503);
		assertThat(response.getContentAsString()).isEqualTo("request-in-flight after 2");
	}

	@Test
	void aPathThatIsNoUriStillGetsTheProblemWithoutItsInstance() throws Exception {
		MockHttpServletResponse response = resolve(
				new IdempotencyRejectedException(IdempotencyError.of(IdempotencyErrorType.KEY_REUSED, "reused")),
				"/things/%zz|{x}");
		assertThat(response.getStatus()).isEqualTo(422);
		JsonNode problem = JSON.readTree(response.getContentAsByteArray());
		assertThat(problem.get("detail").asString()).isEqualTo("reused");
		assertThat(problem.has("instance")).isFalse();
	}

	@Test
	void otherExceptionsAreLeftToOtherResolvers() {
		assertThat(this.resolver.resolveException(new MockHttpServletRequest(), new MockHttpServletResponse(), null,
				new IllegalStateException("not ours")))
			.isNull();
	}

	@Test
	void withoutAConverterForProblemJsonOnlyTheStatusAndHeadersAreSent() throws Exception {
		IdempotencyErrorExceptionResolver bare = new IdempotencyErrorExceptionResolver(
				() -> List.of(new StringHttpMessageConverter()), null);
		MockHttpServletResponse response = new MockHttpServletResponse();
		assertThat(bare.resolveException(new MockHttpServletRequest("POST", "/things"), response, null,
				new IdempotencyRejectedException(new IdempotencyError(IdempotencyErrorType.STORE_UNAVAILABLE, 503,
						"down", Duration.ofSeconds(5)))))
			.isNotNull();
		assertThat(response.getStatus()).isEqualTo(503);
		assertThat(response.getHeader("Retry-After")).isEqualTo("5");
		assertThat(response.getContentAsByteArray()).isEmpty();
	}

	private MockHttpServletResponse resolve(IdempotencyRejectedException refused, String path) throws Exception {
		MockHttpServletRequest request = new MockHttpServletRequest("POST", path);
		MockHttpServletResponse response = new MockHttpServletResponse();
		assertThat(this.resolver.resolveException(request, response, null, refused)).isNotNull();
		return response;
	}

}
