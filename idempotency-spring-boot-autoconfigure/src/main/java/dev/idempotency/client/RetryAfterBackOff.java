package dev.idempotency.client;

import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpRequest;
import org.springframework.util.Assert;
import org.springframework.util.backoff.BackOff;
import org.springframework.util.backoff.BackOffExecution;
import org.springframework.util.backoff.ExponentialBackOff;

/**
 * The wait before each retry of one call: the last answer's {@code Retry-After} when it
 * has one (seconds or an HTTP date), else the configured backoff. It stops the retries
 * after {@link IdempotencyKeyClientInterceptor.Settings#maxAttempts()} attempts, when an
 * answer asks for more than {@link IdempotencyKeyClientInterceptor.Settings#maxDelay()}
 * (that answer is the caller's), and when the next attempt would start after the key's
 * lifetime (then {@link #expired()} says so).
 */
final class RetryAfterBackOff implements BackOff, BackOffExecution {

	/** Logs as the interceptor, whose logger name users already configure. */
	private static final Log logger = LogFactory.getLog(IdempotencyKeyClientInterceptor.class);

	private final IdempotencyKeyClientInterceptor.Settings settings;

	private final Clock clock;

	private final Attempts attempts;

	private final String key;

	private final Instant created;

	private final BackOffExecution configured;

	private @Nullable IdempotencyKeyExpiredException expired;

	RetryAfterBackOff(IdempotencyKeyClientInterceptor.Settings settings, Clock clock, Attempts attempts, String key,
			Instant created) {
		this.settings = settings;
		this.clock = clock;
		this.attempts = attempts;
		this.key = key;
		this.created = created;
		this.configured = configuredBackOff(settings).start();
	}

	@Override
	public BackOffExecution start() {
		return this;
	}

	@Override
	public long nextBackOff() {
		// Advanced on every retry, so that the nth wait without Retry-After is the nth
		// step of the configured backoff.
		Duration backoff = Duration.ofMillis(this.configured.nextBackOff());
		int made = this.attempts.made();
		boolean lastAttempt = made >= this.settings.maxAttempts();
		Exception failure = this.attempts.lastFailure();
		Duration wait;
		String why;
		if (failure instanceof RetriedAnswer answer) {
			Duration retryAfter = retryAfter(answer.response().getHeaders());
			if (retryAfter != null && retryAfter.compareTo(this.settings.maxDelay()) > 0) {
				return STOP;
			}
			wait = (retryAfter != null) ? retryAfter : backoff;
			if (lastAttempt) {
				return STOP;
			}
			answer.response().close();
			if (!withinLifetime(wait)) {
				this.expired = expired(wait, made, answer.status(), null);
				return STOP;
			}
			why = "answer " + answer.status();
		}
		else {
			IOException error = (IOException) failure;
			wait = backoff;
			if (lastAttempt) {
				return STOP;
			}
			if (!withinLifetime(wait)) {
				this.expired = expired(wait, made, null, error);
				return STOP;
			}
			why = "I/O error: " + error;
		}
		log(made, why, wait);
		this.attempts.waitGranted();
		return wait.toMillis();
	}

	/** Why the retries stopped if the key's lifetime stopped them, else {@code null}. */
	@Nullable IdempotencyKeyExpiredException expired() {
		return this.expired;
	}

	/**
	 * Whether an attempt after this wait still starts within the key's lifetime, counted
	 * from the first attempt: later, the server may have forgotten the key.
	 */
	private boolean withinLifetime(Duration wait) {
		Duration lifetime = this.settings.keyLifetime();
		return lifetime == null || this.clock.instant().plus(wait).isBefore(this.created.plus(lifetime));
	}

	private IdempotencyKeyExpiredException expired(Duration wait, int attempts, @Nullable Integer lastStatus,
			@Nullable IOException lastError) {
		Duration lifetime = this.settings.keyLifetime();
		Assert.state(lifetime != null, "only a key with a lifetime expires");
		Duration elapsed = Duration.between(this.created, this.clock.instant());
		HttpRequest request = this.attempts.request();
		return new IdempotencyKeyExpiredException(request.getMethod() + " " + request.getURI(),
				this.settings.headerName(), this.key, lifetime, elapsed, wait, attempts, lastStatus, lastError);
	}

	/**
	 * The configured backoff, used when an answer has no Retry-After: exponential from
	 * the initial backoff, doubling, capped at the maximum delay. Its jitter moves each
	 * wait by up to half the interval either way, never below the initial backoff.
	 */
	private static ExponentialBackOff configuredBackOff(IdempotencyKeyClientInterceptor.Settings settings) {
		long max = settings.maxDelay().toMillis();
		long initial = Math.min(settings.initialBackoff().toMillis(), max);
		ExponentialBackOff backOff = new ExponentialBackOff(initial, 2.0);
		backOff.setMaxInterval(max);
		backOff.setJitter(initial / 2);
		return backOff;
	}

	private @Nullable Duration retryAfter(HttpHeaders headers) {
		String value = headers.getFirst(HttpHeaders.RETRY_AFTER);
		if (value == null || value.isBlank()) {
			return null;
		}
		String trimmed = value.trim();
		try {
			if (trimmed.chars().allMatch(Character::isDigit)) {
				return Duration.ofSeconds(Long.parseLong(trimmed));
			}
			Instant at = ZonedDateTime.parse(trimmed, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant();
			Duration until = Duration.between(this.clock.instant(), at);
			return until.isNegative() ? Duration.ZERO : until;
		}
		catch (NumberFormatException | DateTimeParseException ex) {
			return null;
		}
	}

	private void log(int attempt, String why, Duration wait) {
		if (logger.isDebugEnabled()) {
			HttpRequest request = this.attempts.request();
			logger.debug("Retrying " + request.getMethod() + " " + request.getURI() + " with "
					+ this.settings.headerName() + " " + this.key + " after attempt " + attempt + " (" + why + ") in "
					+ wait.toMillis() + " ms");
		}
	}

}
