package dev.idempotency.client;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.SequenceInputStream;
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

import org.springframework.core.retry.RetryException;
import org.springframework.core.retry.RetryPolicy;
import org.springframework.core.retry.RetryTemplate;
import org.springframework.core.retry.Retryable;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpRequest;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;
import org.springframework.util.Assert;
import org.springframework.util.backoff.BackOff;
import org.springframework.util.backoff.BackOffExecution;
import org.springframework.util.backoff.ExponentialBackOff;

/**
 * Makes each call of the configured methods (POST by default) one logical operation with
 * one {@code Idempotency-Key}: a fresh UUIDv7 per call (a key the caller set itself is
 * kept), the same key on every retry of that call. It retries, with the same key and
 * body, when the answer may not have been the operation's: an I/O error (the request may
 * have reached the server, and the key makes a second delivery safe), {@code 408},
 * {@code 429}, {@code 500}, {@code 502}, {@code 503}, {@code 504}, and the server's
 * in-flight answer ({@code 409} with a problem {@code type} ending in
 * {@code request-in-flight}: the first attempt still runs). Every other answer is the
 * caller's, at once.
 * <p>
 * The attempts run in Spring Framework's {@link RetryTemplate}, whose {@link BackOff}
 * waits what the answer's {@code Retry-After} asks (seconds or an HTTP date), or else an
 * {@link ExponentialBackOff} from {@link Settings#initialBackoff()}, doubling with
 * jitter, capped at {@link Settings#maxDelay()}; an answer asking for more than
 * {@link Settings#maxDelay()} is returned to the caller instead. Retries stop after
 * {@link Settings#maxAttempts()} attempts, and the last answer (or I/O error) is the
 * caller's. They also stop before an attempt would start after
 * {@link Settings#keyLifetime()} (the server's key lifetime, e.g. Iceberg's
 * {@code idempotency-key-lifetime}; 30 minutes by default, the starter's server default)
 * has passed since the first attempt: the server may have forgotten the key, and a retry
 * could run the operation a second time. The call then fails with an
 * {@link IdempotencyKeyExpiredException} that names the lifetime and the time elapsed,
 * with the last I/O error as its cause (a last answer is closed). The interceptor does
 * not learn the lifetime from the server: configure it to what the server advertises.
 * <p>
 * Only turn it on for servers that honour the key: a server that ignores it runs every
 * retried request again.
 *
 * @since 0.1.0
 */
public class IdempotencyKeyClientInterceptor implements ClientHttpRequestInterceptor {

	private static final Log logger = LogFactory.getLog(IdempotencyKeyClientInterceptor.class);

	private static final Set<Integer> RETRIED_STATUSES = Set.of(408, 429, 500, 502, 503, 504);

	private static final String IN_FLIGHT_TYPE = "request-in-flight";

	/** How much of a 409 body is read to look for the in-flight problem type. */
	private static final int IN_FLIGHT_PEEK_BYTES = 8192;

	private final Settings settings;

	private final Clock clock;

	public IdempotencyKeyClientInterceptor(Settings settings) {
		this(settings, Clock.systemUTC());
	}

	IdempotencyKeyClientInterceptor(Settings settings, Clock clock) {
		this.settings = settings;
		this.clock = clock;
	}

	public Settings settings() {
		return this.settings;
	}

	@Override
	public ClientHttpResponse intercept(HttpRequest request, byte[] body, ClientHttpRequestExecution execution)
			throws IOException {
		if (!this.settings.methods().contains(request.getMethod())) {
			return execution.execute(request, body);
		}
		Instant created = this.clock.instant();
		String key = request.getHeaders().getFirst(this.settings.headerName());
		if (key == null) {
			key = UuidV7.next(created.toEpochMilli());
			request.getHeaders().set(this.settings.headerName(), key);
		}
		Attempts attempts = new Attempts(request, body, execution);
		RetryAfterBackOff backOff = new RetryAfterBackOff(attempts, key, created);
		RetryPolicy policy = RetryPolicy.builder()
			.predicate((failure) -> failure instanceof IOException || failure instanceof RetriedAnswer)
			.backOff(backOff)
			.build();
		try {
			return new RetryTemplate(policy).execute(attempts);
		}
		catch (RetryException ex) {
			return outcome(ex.getLastException(), attempts, backOff);
		}
	}

	/**
	 * The caller's outcome once the template stopped: the key expired, the wait was
	 * interrupted, or the last answer (or error) is the caller's.
	 */
	private ClientHttpResponse outcome(Throwable last, Attempts attempts, RetryAfterBackOff backOff)
			throws IOException {
		IdempotencyKeyExpiredException expired = backOff.expired;
		if (expired != null) {
			throw expired;
		}
		if (attempts.waiting) {
			// The template stops between a granted wait and the next attempt only when
			// the wait is interrupted.
			InterruptedIOException interrupted = new InterruptedIOException("interrupted while waiting to retry");
			if (last instanceof IOException) {
				interrupted.initCause(last);
			}
			throw interrupted;
		}
		if (last instanceof RetriedAnswer answer) {
			return answer.response;
		}
		if (last instanceof IOException ex) {
			throw ex;
		}
		if (last instanceof RuntimeException ex) {
			throw ex;
		}
		if (last instanceof Error error) {
			throw error;
		}
		throw new IllegalStateException("Unexpected failure of " + this, last);
	}

	/**
	 * Whether an attempt after this wait still starts within the key's lifetime, counted
	 * from the first attempt: later, the server may have forgotten the key.
	 */
	private boolean withinLifetime(Instant created, Duration wait) {
		Duration lifetime = this.settings.keyLifetime();
		return lifetime == null || this.clock.instant().plus(wait).isBefore(created.plus(lifetime));
	}

	private IdempotencyKeyExpiredException expired(HttpRequest request, String key, Instant created, Duration wait,
			int attempts, @Nullable Integer lastStatus, @Nullable IOException lastError) {
		Duration lifetime = this.settings.keyLifetime();
		Assert.state(lifetime != null, "only a key with a lifetime expires");
		Duration elapsed = Duration.between(created, this.clock.instant());
		return new IdempotencyKeyExpiredException(request.getMethod() + " " + request.getURI(),
				this.settings.headerName(), key, lifetime, elapsed, wait, attempts, lastStatus, lastError);
	}

	/**
	 * The configured backoff, used when an answer has no Retry-After: exponential from
	 * the initial backoff, doubling, capped at the maximum delay. Its jitter moves each
	 * wait by up to half the interval either way, never below the initial backoff.
	 */
	private ExponentialBackOff configuredBackOff() {
		long max = this.settings.maxDelay().toMillis();
		long initial = Math.min(this.settings.initialBackoff().toMillis(), max);
		ExponentialBackOff backOff = new ExponentialBackOff(initial, 2.0);
		backOff.setMaxInterval(max);
		backOff.setJitter(initial / 2);
		return backOff;
	}

	private Answer classify(ClientHttpResponse response) throws IOException {
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

	private void log(HttpRequest request, String key, int attempt, String why, Duration wait) {
		if (logger.isDebugEnabled()) {
			logger.debug(
					"Retrying " + request.getMethod() + " " + request.getURI() + " with " + this.settings.headerName()
							+ " " + key + " after attempt " + attempt + " (" + why + ") in " + wait.toMillis() + " ms");
		}
	}

	/**
	 * How the interceptor retries.
	 *
	 * @param headerName the request header carrying the key
	 * @param methods the methods that get a key and are retried; others pass through
	 * @param maxAttempts attempts of one call at most, the first included (at least 1)
	 * @param initialBackoff the wait after the first failed attempt without Retry-After,
	 * doubled after each further one; jitter moves each wait by up to half either way,
	 * never below this
	 * @param maxDelay the longest wait between two attempts: the backoff is capped at it,
	 * and an answer whose Retry-After asks for longer is returned to the caller
	 * @param keyLifetime the server's key lifetime, or {@code null} for no bound: no
	 * attempt starts once this long has passed since the first attempt
	 * @since 0.1.0
	 */
	public record Settings(String headerName, Set<HttpMethod> methods, int maxAttempts, Duration initialBackoff,
			Duration maxDelay, @Nullable Duration keyLifetime) {

		public Settings {
			Assert.hasText(headerName, "headerName must not be empty");
			Assert.isTrue(maxAttempts >= 1, "maxAttempts must be at least 1");
			Assert.isTrue(!initialBackoff.isNegative(), "initialBackoff must not be negative");
			Assert.isTrue(!maxDelay.isNegative(), "maxDelay must not be negative");
			Assert.isTrue(keyLifetime == null || (!keyLifetime.isNegative() && !keyLifetime.isZero()),
					"keyLifetime must be positive");
			methods = Set.copyOf(methods);
		}

		/**
		 * POST only, 4 attempts, 200 ms doubling up to 10 s, a key lifetime of 30 minutes
		 * (the starter's server default, {@code idempotency.lifetime}).
		 */
		public static Settings defaults() {
			return new Settings("Idempotency-Key", Set.of(HttpMethod.POST), 4, Duration.ofMillis(200),
					Duration.ofSeconds(10), Duration.ofMinutes(30));
		}

	}

	private record Answer(ClientHttpResponse response, boolean retry) {
	}

	/**
	 * The attempts of one call, each with the same request, key and body. An answer that
	 * may not have been the operation's is thrown as a {@link RetriedAnswer} so that the
	 * template retries it.
	 */
	private final class Attempts implements Retryable<ClientHttpResponse> {

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

	}

	/**
	 * The wait before each retry of one call: the last answer's {@code Retry-After} when
	 * it has one, else the configured backoff. It stops the retries after
	 * {@link Settings#maxAttempts()} attempts, when an answer asks for more than
	 * {@link Settings#maxDelay()} (that answer is the caller's), and when the next
	 * attempt would start after the key's lifetime (then {@link #expired} is set).
	 */
	private final class RetryAfterBackOff implements BackOff, BackOffExecution {

		private final Attempts attempts;

		private final String key;

		private final Instant created;

		private final BackOffExecution configured = configuredBackOff().start();

		private @Nullable IdempotencyKeyExpiredException expired;

		RetryAfterBackOff(Attempts attempts, String key, Instant created) {
			this.attempts = attempts;
			this.key = key;
			this.created = created;
		}

		@Override
		public BackOffExecution start() {
			return this;
		}

		@Override
		public long nextBackOff() {
			// Advanced on every retry, so that the nth wait without Retry-After is the
			// nth
			// step of the configured backoff.
			Duration backoff = Duration.ofMillis(this.configured.nextBackOff());
			int made = this.attempts.made;
			boolean lastAttempt = made >= IdempotencyKeyClientInterceptor.this.settings.maxAttempts();
			Exception failure = this.attempts.lastFailure;
			Duration wait;
			String why;
			if (failure instanceof RetriedAnswer answer) {
				Duration retryAfter = retryAfter(answer.response.getHeaders());
				if (retryAfter != null
						&& retryAfter.compareTo(IdempotencyKeyClientInterceptor.this.settings.maxDelay()) > 0) {
					return STOP;
				}
				wait = (retryAfter != null) ? retryAfter : backoff;
				if (lastAttempt) {
					return STOP;
				}
				answer.response.close();
				if (!withinLifetime(this.created, wait)) {
					this.expired = expired(this.attempts.request, this.key, this.created, wait, made, answer.status,
							null);
					return STOP;
				}
				why = "answer " + answer.status;
			}
			else {
				IOException error = (IOException) failure;
				wait = backoff;
				if (lastAttempt) {
					return STOP;
				}
				if (!withinLifetime(this.created, wait)) {
					this.expired = expired(this.attempts.request, this.key, this.created, wait, made, null, error);
					return STOP;
				}
				why = "I/O error: " + error;
			}
			log(this.attempts.request, this.key, made, why, wait);
			this.attempts.waiting = true;
			return wait.toMillis();
		}

	}

	/** An answer that may not have been the operation's, thrown so that it is retried. */
	private static final class RetriedAnswer extends Exception {

		private static final long serialVersionUID = 1L;

		private final transient ClientHttpResponse response;

		private final int status;

		RetriedAnswer(ClientHttpResponse response, int status) {
			super(null, null, false, false);
			this.response = response;
			this.status = status;
		}

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
