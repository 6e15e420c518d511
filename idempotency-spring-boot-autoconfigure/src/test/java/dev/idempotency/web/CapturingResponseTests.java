package dev.idempotency.web;

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import org.springframework.mock.web.MockHttpServletResponse;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What the response wrapper keeps of a body that is reset, and when a held body is sent.
 */
class CapturingResponseTests {

	@Test
	void aResetDropsTextStillInTheWritersEncoderFromTheStoredBody() throws Exception {
		MockHttpServletResponse target = new MockHttpServletResponse();
		CapturingResponse response = new CapturingResponse(target);
		response.startCapture(1024, true);
		response.setContentType("application/json");
		response.getWriter().print("{\"partial\":");
		// As Spring MVC does before rendering an exception handler's answer.
		response.resetBuffer();
		response.getWriter().print("{\"error\":1}");
		response.flushWriter();

		assertThat(new String(response.capturedBody(), StandardCharsets.UTF_8)).isEqualTo("{\"error\":1}");
		response.sendHeld();
		assertThat(target.getContentAsString()).isEqualTo("{\"error\":1}");
	}

	@Test
	void aStreamedAnswerResetBeforeAnythingWasCommittedIsCopiedAfresh() throws Exception {
		MockHttpServletResponse target = new MockHttpServletResponse();
		CapturingResponse response = new CapturingResponse(target);
		response.startCapture(1024, false);
		response.getOutputStream().write("stale".getBytes(StandardCharsets.UTF_8));
		response.resetBuffer();
		response.getOutputStream().write("fresh".getBytes(StandardCharsets.UTF_8));

		assertThat(new String(response.capturedBody(), StandardCharsets.UTF_8)).isEqualTo("fresh");
		assertThat(target.getContentAsString()).isEqualTo("fresh");
	}

	@Test
	void aHeldAnswerWrittenThroughTheWriterIsSentWhole() throws Exception {
		MockHttpServletResponse target = new MockHttpServletResponse();
		CapturingResponse response = new CapturingResponse(target);
		response.startCapture(1024, true);
		response.setContentType("text/plain");
		response.getWriter().print("not flushed by the handler");

		response.sendHeld();
		assertThat(target.getContentAsString()).isEqualTo("not flushed by the handler");
	}

	@Test
	void aHeldAnswerIsSentOnlyOnceStoredWithItsLength() throws Exception {
		MockHttpServletResponse target = new MockHttpServletResponse();
		CapturingResponse response = new CapturingResponse(target);
		response.startCapture(1024, true);
		response.getOutputStream().write("answer".getBytes(StandardCharsets.UTF_8));
		response.getOutputStream().flush();

		assertThat(target.getContentAsByteArray()).isEmpty();
		assertThat(target.isCommitted()).isFalse();
		response.sendHeld();
		assertThat(target.getContentAsString()).isEqualTo("answer");
		assertThat(target.getContentLength()).isEqualTo(6);
	}

}
