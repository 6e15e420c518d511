package dev.idempotency.client;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.SequenceInputStream;

import org.jspecify.annotations.Nullable;

import org.springframework.core.retry.Retryable;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpRequest;
import org.springframework.http.HttpStatusCode;
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
		if (RetryRule.retriedStatus(status)) {
			return new Answer(response, true);
		}
		if (RetryRule.mayBeInFlight(status, response.getHeaders().getContentType())) {
			InputStream in = response.getBody();
			byte[] head = in.readNBytes(RetryRule.IN_FLIGHT_PEEK_BYTES);
			ClientHttpResponse replayable = new PeekedResponse(response, head);
			return new Answer(replayable, RetryRule.inFlightType(head));
		}
		return new Answer(response, false);
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
