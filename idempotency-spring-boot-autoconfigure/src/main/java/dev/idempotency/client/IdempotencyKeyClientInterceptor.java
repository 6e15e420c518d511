package dev.idempotency.client;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Set;

import org.jspecify.annotations.Nullable;

import org.springframework.core.retry.RetryException;
import org.springframework.core.retry.RetryPolicy;
import org.springframework.core.retry.RetryTemplate;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpRequest;
import org.springframework.http.client.ClientHttpRequestExecution;
import org.springframework.http.client.ClientHttpRequestInterceptor;
import org.springframework.http.client.ClientHttpResponse;
import org.springframework.util.Assert;
import org.springframework.util.backoff.BackOff;
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
		RetryRule rule = new RetryRule(this.settings, this.clock, request.getMethod() + " " + request.getURI(), key,
				created);
		RetryAfterBackOff backOff = new RetryAfterBackOff(rule, attempts);
		RetryPolicy policy = RetryPolicy.builder()
			.predicate((failure) -> failure instanceof IOException || failure instanceof RetriedAnswer)
			.backOff(backOff)
			.build();
		try {
			return new RetryTemplate(policy).execute(attempts);
		}
		catch (RetryException ex) {
			return outcome(ex.getLastException(), attempts, rule);
		}
	}

	/**
	 * The caller's outcome once the template stopped: the key expired, the wait was
	 * interrupted, or the last answer (or error) is the caller's.
	 */
	private ClientHttpResponse outcome(Throwable last, Attempts attempts, RetryRule rule) throws IOException {
		IdempotencyKeyExpiredException expired = rule.expired();
		if (expired != null) {
			throw expired;
		}
		if (attempts.waiting()) {
			// The template stops between a granted wait and the next attempt only when
			// the wait is interrupted.
			InterruptedIOException interrupted = new InterruptedIOException("interrupted while waiting to retry");
			if (last instanceof IOException) {
				interrupted.initCause(last);
			}
			throw interrupted;
		}
		if (last instanceof RetriedAnswer answer) {
			return answer.response();
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

}
