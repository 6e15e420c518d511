package dev.idempotency.client;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.Set;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.http.MediaType;
import org.springframework.util.Assert;
import org.springframework.util.backoff.BackOffExecution;
import org.springframework.util.backoff.ExponentialBackOff;

/**
 * The one retry rule of both clients, the {@link IdempotencyKeyClientInterceptor}
 * ({@code RestClient}, {@code RestTemplate}) and the
 * {@link IdempotencyKeyExchangeFilterFunction} ({@code WebClient}), for one call: which
 * answers may not have been the operation's ({@code 408}, {@code 429}, {@code 500},
 * {@code 502}, {@code 503}, {@code 504}, the server's in-flight problem), and how long to
 * wait before the next attempt: the answer's {@code Retry-After} when it has one (seconds
 * or an HTTP date), else the configured backoff. It stops after
 * {@link IdempotencyKeyClientInterceptor.Settings#maxAttempts()} attempts, when an answer
 * asks for more than {@link IdempotencyKeyClientInterceptor.Settings#maxDelay()} (that
 * answer is the caller's), and when the next attempt would start after the key's lifetime
 * (then {@link #expired()} says so).
 */
final class RetryRule {

	/** Logs as the interceptor, whose logger name users already configure. */
	private static final Log logger = LogFactory.getLog(IdempotencyKeyClientInterceptor.class);

	private static final Set<Integer> RETRIED_STATUSES = Set.of(408, 429, 500, 502, 503, 504);

	private static final String IN_FLIGHT_TYPE = "request-in-flight";

	/** How much of a 409 body is read to look for the in-flight problem type. */
	static final int IN_FLIGHT_PEEK_BYTES = 8192;

	private final IdempotencyKeyClientInterceptor.Settings settings;

	private final Clock clock;

	private final String call;

	private final String key;

	private final Instant created;

	private final BackOffExecution configured;

	private @Nullable IdempotencyKeyExpiredException expired;

	/**
	 * @param call the call, as {@code POST https://host/path}, for the log and the
	 * expiry's message
	 * @param created when the first attempt started
	 */
	RetryRule(IdempotencyKeyClientInterceptor.Settings settings, Clock clock, String call, String key,
			Instant created) {
		this.settings = settings;
		this.clock = clock;
		this.call = call;
		this.key = key;
		this.created = created;
		this.configured = configuredBackOff(settings).start();
	}

	/** Whether an answer with this status is retried whatever its body says. */
	static boolean retriedStatus(int status) {
		return RETRIED_STATUSES.contains(status);
	}

	/**
	 * Whether an answer may be the server's in-flight problem, so that the first
	 * {@link #IN_FLIGHT_PEEK_BYTES} of its body are read to find out.
	 */
	static boolean mayBeInFlight(int status, @Nullable MediaType type) {
		return status == 409 && type != null && (MediaType.APPLICATION_PROBLEM_JSON.isCompatibleWith(type)
				|| MediaType.APPLICATION_JSON.isCompatibleWith(type));
	}

	/** The problem's {@code "type"} member names the in-flight refusal (any base URI). */
	static boolean inFlightType(byte[] head) {
		String text = new String(head, StandardCharsets.UTF_8);
		int member = text.indexOf("\"type\"");
		if (member < 0) {
			return false;
		}
		int open = text.indexOf('"', text.indexOf(':', member) + 1);
		int close = (open < 0) ? -1 : text.indexOf('"', open + 1);
		return close > open && text.substring(open + 1, close).endsWith(IN_FLIGHT_TYPE);
	}

	/**
	 * The wait before the next attempt, after attempt {@code made} ended in a retried
	 * answer or in an error on the way (the request may have reached the server).
	 * @param status the retried answer's status, {@code null} for an error
	 * @param retryAfter the answer's {@code Retry-After} header
	 * @param error the error, {@code null} for an answer
	 * @return the wait, or {@code null} to stop: the last answer or error is the
	 * caller's, unless {@link #expired()} says the key's lifetime stopped the retries
	 */
	@Nullable Duration next(int made, @Nullable Integer status, @Nullable String retryAfter, @Nullable Throwable error) {
		// Advanced on every retry, so that the nth wait without Retry-After is the nth
		// step of the configured backoff.
		Duration wait = Duration.ofMillis(this.configured.nextBackOff());
		if (status != null) {
			Duration asked = retryAfter(retryAfter);
			if (asked != null && asked.compareTo(this.settings.maxDelay()) > 0) {
				return null;
			}
			wait = (asked != null) ? asked : wait;
		}
		if (made >= this.settings.maxAttempts()) {
			return null;
		}
		if (!withinLifetime(wait)) {
			this.expired = expired(wait, made, status, error);
			return null;
		}
		if (logger.isDebugEnabled()) {
			logger.debug("Retrying " + this.call + " with " + this.settings.headerName() + " " + this.key
					+ " after attempt " + made + " (" + ((status != null) ? "answer " + status : "I/O error: " + error)
					+ ") in " + wait.toMillis() + " ms");
		}
		return wait;
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
			@Nullable Throwable lastError) {
		Duration lifetime = this.settings.keyLifetime();
		Assert.state(lifetime != null, "only a key with a lifetime expires");
		Duration elapsed = Duration.between(this.created, this.clock.instant());
		return new IdempotencyKeyExpiredException(this.call, this.settings.headerName(), this.key, lifetime, elapsed,
				wait, attempts, lastStatus, lastError);
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

	private @Nullable Duration retryAfter(@Nullable String value) {
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

}
