package dev.idempotency.client;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.nio.charset.StandardCharsets;
import java.util.Set;

import org.jspecify.annotations.Nullable;

import org.springframework.core.retry.Retryable;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpRequest;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpResponse;

/**
 * The attempts of one call, each with the same request, key and body, and which of their
 * answers are retried: an answer that may not have been the operation's ({@code 408},
 * {@code 429}, {@code 500}, {@code 502}, {@code 503}, {@code 504}, or the server's
 * in-flight problem) is thrown as a {@link RetriedAnswer} so that the template retries
 * it; an I/O error is thrown as it is.
 */
final class Attempts implements Retryable<ClientHttpResponse> {

	private static final Set<Integer> RETRIED_STATUSES = Set.of(408, 429, 500, 502, 503, 504);

	private static final String IN_FLIGHT_TYPE = "request-in-flight";

	/** How much of a 409 body is read to look for the in-flight problem type. */
	private static final int IN_FLIGHT_PEEK_BYTES = 8192;

	private final HttpRequest request;

	private final byte[] body;

	private final ClientHttpRequestExecution execution;

	/** Attempts started, the first included. */
	private int made;

	/** The last attempt's I/O error or retried answer. */
	private @Nullable Exception lastFailure;

	/** Set when a wait was granted and its attempt has not started yet. */
	private boolean waiting;

	Attempts(HttpRequest request, byte[] body, ClientHttpRequestExecution execution) {
		this.request = request;
		this.body = body;
		this.execution = execution;
	}

	@Override
	public ClientHttpResponse execute() throws IOException, RetriedAnswer {
		this.made++;
		this.waiting = false;
		Answer answer;
		try {
			answer = classify(this.execution.execute(this.request, this.body));
		}
		catch (IOException ex) {
			this.lastFailure = ex;
			throw ex;
		}
		if (answer.retry()) {
			RetriedAnswer retried = new RetriedAnswer(answer.response(), answer.response().getStatusCode().value());
			this.lastFailure = retried;
			throw retried;
		}
		return answer.response();
	}

	@Override
	public String getName() {
		return this.request.getMethod() + " " + this.request.getURI();
	}

	HttpRequest request() {
		return this.request;
	}

	/** Attempts started, the first included. */
	int made() {
		return this.made;
	}

	/** The last attempt's I/O error or retried answer. */
	@Nullable Exception lastFailure() {
		return this.lastFailure;
	}

	/** Whether a wait was granted and its attempt has not started yet. */
	boolean waiting() {
		return this.waiting;
	}

	/** A wait before the next attempt was granted. */
	void waitGranted() {
		this.waiting = true;
	}

	private static Answer classify(ClientHttpResponse response) throws IOException {
		int status = response.getStatusCode().value();
		if (RETRIED_STATUSES.contains(status)) {
			return new Answer(response, true);
		}
		if (status == 409 && isProblem(response.getHeaders().getContentType())) {
			InputStream in = response.getBody();
			byte[] head = in.readNBytes(IN_FLIGHT_PEEK_BYTES);
			ClientHttpResponse replayable = new PeekedResponse(response, head);
			return new Answer(replayable, inFlightType(head));
		}
		return new Answer(response, false);
	}

	private static boolean isProblem(@Nullable MediaType type) {
		return type != null && (MediaType.APPLICATION_PROBLEM_JSON.isCompatibleWith(type)
				|| MediaType.APPLICATION_JSON.isCompatibleWith(type));
	}

	/** The problem's {@code "type"} member names the in-flight refusal (any base URI). */
	private static boolean inFlightType(byte[] head) {
		String text = new String(head, StandardCharsets.UTF_8);
		int member = text.indexOf("\"type\"");
		if (member < 0) {
			return false;
		}
		int open = text.indexOf('"', text.indexOf(':', member) + 1);
		int close = (open < 0) ? -1 : text.indexOf('"', open + 1);
		return close > open && text.substring(open + 1, close).endsWith(IN_FLIGHT_TYPE);
	}

	private record Answer(ClientHttpResponse response, boolean retry) {
	}

	/** A response whose first bytes were read: they are given back before the rest. */
	private static final class PeekedResponse implements ClientHttpResponse {

		private final ClientHttpResponse delegate;

		private final InputStream body;

		PeekedResponse(ClientHttpResponse delegate, byte[] head) throws IOException {
			this.delegate = delegate;
			this.body = new SequenceInputStream(new ByteArrayInputStream(head), delegate.getBody());
		}

		@Override
		public HttpStatusCode getStatusCode() throws IOException {
			return this.delegate.getStatusCode();
		}

		@Override
		public String getStatusText() throws IOException {
			return this.delegate.getStatusText();
		}

		@Override
		public HttpHeaders getHeaders() {
			return this.delegate.getHeaders();
		}

		@Override
		public InputStream getBody() {
			return this.body;
		}

		@Override
		public void close() {
			this.delegate.close();
		}

	}

}
