package dev.idempotency.web;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import org.springframework.mock.web.MockHttpServletRequest;

import static org.assertj.core.api.Assertions.assertThat;

class CachedBodyRequestTests {

	private static final byte[] BODY = "{\"namespace\":[\"sales\"],\"properties\":{\"owner\":\"ü\"}}"
		.getBytes(StandardCharsets.UTF_8);

	@Test
	void aBodyOfDeclaredLengthIsCachedWholeAndCanBeReadAgain() throws IOException {
		MockHttpServletRequest request = new MockHttpServletRequest("POST", "/v1/namespaces");
		request.setContent(BODY);
		CachedBodyRequest cached = new CachedBodyRequest(request);
		assertThat(cached.body()).isEqualTo(BODY);
		assertThat(cached.getInputStream().readAllBytes()).isEqualTo(BODY);
		assertThat(cached.getInputStream().readAllBytes()).isEqualTo(BODY);
		assertThat(cached.getContentLengthLong()).isEqualTo(BODY.length);
	}

	@Test
	void aChunkedBodyWithoutDeclaredLengthIsReadToItsEnd() throws IOException {
		assertThat(new CachedBodyRequest(declaring(-1)).body()).isEqualTo(BODY);
	}

	@Test
	void aBodyShorterThanDeclaredKeepsWhatArrived() throws IOException {
		assertThat(new CachedBodyRequest(declaring(BODY.length + 100)).body()).isEqualTo(BODY);
	}

	@Test
	void aBodyLongerThanDeclaredIsReadToItsEnd() throws IOException {
		// e.g. a filter in front that decompresses the body but keeps the header
		assertThat(new CachedBodyRequest(declaring(5)).body()).isEqualTo(BODY);
	}

	@Test
	void aHugeDeclaredLengthAllocatesOnlyWhatArrives() throws IOException {
		assertThat(new CachedBodyRequest(declaring(Integer.MAX_VALUE - 100L)).body()).isEqualTo(BODY);
	}

	/** A request carrying {@link #BODY} whose Content-Length says {@code length}. */
	private static MockHttpServletRequest declaring(long length) {
		MockHttpServletRequest request = new MockHttpServletRequest("POST", "/v1/namespaces") {

			@Override
			public long getContentLengthLong() {
				return length;
			}

		};
		request.setContent(BODY);
		return request;
	}

}
