package dev.idempotency.client;

import org.springframework.http.client.ClientHttpResponse;

/**
 * An answer that may not have been the operation's, thrown so that the
 * {@link org.springframework.core.retry.RetryTemplate} retries it.
 */
final class RetriedAnswer extends Exception {

	private static final long serialVersionUID = 1L;

	private final transient ClientHttpResponse response;

	private final int status;

	RetriedAnswer(ClientHttpResponse response, int status) {
		super(null, null, false, false);
		this.response = response;
		this.status = status;
	}

	ClientHttpResponse response() {
		return this.response;
	}

	int status() {
		return this.status;
	}

}
