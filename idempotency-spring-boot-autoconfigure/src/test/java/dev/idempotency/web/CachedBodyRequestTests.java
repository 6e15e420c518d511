package dev.idempotency.web;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import org.springframework.mock.web.MockHttpServletRequest;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class CachedBodyRequestTests {

	private static final byte[] BODY = "{\"namespace\":[\"sales\"],\"properties\":{\"owner\":\"ü\"}}"
		.getBytes(StandardCharsets.UTF_8);

	@Test
	void aBodyOfDeclaredLengthIsCachedWholeAndCanBeReadAgain() throws IOException {
		MockHttpServletRequest request = new MockHttpServletRequest("POST", "/v1/namespaces");
		request.setContent(BODY);
		CachedBodyRequest cached = new CachedBodyRequest(request);
		assertThat(cached.body(Long.MAX_VALUE)).isEqualTo(BODY);
		assertThat(cached.getInputStream().readAllBytes()).isEqualTo(BODY);
		assertThat(cached.getInputStream().readAllBytes()).isEqualTo(BODY);
		assertThat(cached.getContentLengthLong()).isEqualTo(BODY.length);
	}

	@Test
	void aChunkedBodyWithoutDeclaredLengthIsReadToItsEnd() throws IOException {
		assertThat(new CachedBodyRequest(declaring(-1)).body(Long.MAX_VALUE)).isEqualTo(BODY);
	}

	@Test
	void aBodyShorterThanDeclaredKeepsWhatArrived() throws IOException {
		assertThat(new CachedBodyRequest(declaring(BODY.length + 100)).body(Long.MAX_VALUE)).isEqualTo(BODY);
	}

	@Test
	void aBodyLongerThanDeclaredIsReadToItsEnd() throws IOException {
		// e.g. a filter in front that decompresses the body but keeps the header
		assertThat(new CachedBodyRequest(declaring(5)).body(Long.MAX_VALUE)).isEqualTo(BODY);
	}

	@Test
	void aHugeDeclaredLengthAllocatesOnlyWhatArrives() throws IOException {
		assertThat(new CachedBodyRequest(declaring(Integer.MAX_VALUE - 100L)).body(Long.MAX_VALUE)).isEqualTo(BODY);
	}

	@Test
	void nothingIsReadUntilTheBodyIsAskedFor() throws IOException {
		MockHttpServletRequest request = new MockHttpServletRequest("POST", "/v1/namespaces");
		request.setContent(BODY);
		CachedBodyRequest wrapped = new CachedBodyRequest(request);
		assertThat(wrapped.getInputStream().readAllBytes()).isEqualTo(BODY);
		assertThat(request.getInputStream().read()).as("the handler read the request's own stream").isEqualTo(-1);
	}

	@Test
	void aDeclaredLengthOverTheLimitIsRefusedBeforeAnythingIsRead() throws IOException {
		MockHttpServletRequest request = declaring(BODY.length);
		CachedBodyRequest wrapped = new CachedBodyRequest(request);
		assertThatExceptionOfType(RequestTooLargeException.class).isThrownBy(() -> wrapped.body(BODY.length - 1))
			.withMessageContaining("declares " + BODY.length + " bytes, more than the");
		assertThat(request.getInputStream().readAllBytes()).as("left unread").isEqualTo(BODY);
	}

	@Test
	void aChunkedBodyIsRefusedOnceItPassesTheLimitNotReadToItsEnd() throws IOException {
		byte[] big = new byte[100_000];
		MockHttpServletRequest request = new MockHttpServletRequest("POST", "/v1/namespaces") {

			@Override
			public long getContentLengthLong() {
				return -1;
			}

		};
		request.setContent(big);
		assertThatExceptionOfType(RequestTooLargeException.class)
			.isThrownBy(() -> new CachedBodyRequest(request).body(10_000));
		assertThat(request.getInputStream().readAllBytes().length).as("left unread").isEqualTo(100_000 - 10_001);
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
