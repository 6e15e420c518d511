package dev.idempotency.client;

import java.time.Duration;

import org.springframework.http.HttpHeaders;
import org.springframework.util.backoff.BackOff;
import org.springframework.util.backoff.BackOffExecution;

/**
 * The {@link RetryRule} as the backoff of the interceptor's
 * {@link org.springframework.core.retry.RetryTemplate}: the wait before each retry of one
 * call, or {@link #STOP}.
 */
final class RetryAfterBackOff implements BackOff, BackOffExecution {

	private final RetryRule rule;

	private final Attempts attempts;

	RetryAfterBackOff(RetryRule rule, Attempts attempts) {
		this.rule = rule;
		this.attempts = attempts;
	}

	@Override
	public BackOffExecution start() {
		return this;
	}

	@Override
	public long nextBackOff() {
		Exception failure = this.attempts.lastFailure();
		RetriedAnswer answer = (failure instanceof RetriedAnswer retried) ? retried : null;
		Duration wait = (answer != null)
				? this.rule.next(this.attempts.made(), answer.status(),
						answer.response().getHeaders().getFirst(HttpHeaders.RETRY_AFTER), null)
				: this.rule.next(this.attempts.made(), null, null, failure);
		if (wait == null) {
			return STOP;
		}
		if (answer != null) {
			answer.response().close();
		}
		this.attempts.waitGranted();
		return wait.toMillis();
	}

}
