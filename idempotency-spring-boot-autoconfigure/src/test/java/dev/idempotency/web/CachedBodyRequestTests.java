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
		MockHttpServletRequest request = new MockHttpServletRequest("POST", "/v1/namespaces") {

			@Override
			public long getContentLengthLong() {
				return -1;
			}

		};
		request.setContent(BODY);
		assertThat(new CachedBodyRequest(request).body()).isEqualTo(BODY);
	}

	@Test
	void aBodyShorterThanDeclaredKeepsWhatArrived() throws IOException {
		MockHttpServletRequest request = new MockHttpServletRequest("POST", "/v1/namespaces") {

			@Override
			public long getContentLengthLong() {
				return BODY.length + 100;
			}

		};
		request.setContent(BODY);
		assertThat(new CachedBodyRequest(request).body()).isEqualTo(BODY);
	}

	@Test
	void aBodyLongerThanDeclaredIsReadToItsEnd() throws IOException {
		MockHttpServletRequest request = new MockHttpServletRequest("POST", "/v1/namespaces") {

			@Override
			public long getContentLengthLong() {
				return 5;
			}

		};
		request.setContent(BODY);
		assertThat(new CachedBodyRequest(request).body()).isEqualTo(BODY);
	}

	@Test
	void aHugeDeclaredLengthAllocatesOnlyWhatArrives() throws IOException {
		MockHttpServletRequest request = new MockHttpServletRequest("POST", "/v1/namespaces") {

			@Override
			public long getContentLengthLong() {
				return Integer.MAX_VALUE - 100L;
			}

		};
		request.setContent(BODY);
		assertThat(new CachedBodyRequest(request).body()).isEqualTo(BODY);
	}

}
