package dev.idempotency.client;

import java.io.IOException;
import java.time.Duration;

import org.jspecify.annotations.Nullable;

/**
 * A call that {@link IdempotencyKeyClientInterceptor} stopped retrying because its next
 * attempt would start after the key's lifetime, counted from the first attempt: the
 * server may have forgotten the key by then and would run the request a second time. The
 * outcome of the call is unknown; find out from the server before sending it again (with
 * a new key). The last attempt's I/O error, if it had one, is the cause.
 * <p>
 * An {@link IOException}, as the interceptor's other failures: {@code RestClient} and
 * {@code RestTemplate} hand it to the caller inside a {@code ResourceAccessException}.
 *
 * @since 0.1.0
 */
public class IdempotencyKeyExpiredException extends IOException {

	private static final long serialVersionUID = 1L;

	private final String key;

	private final Duration lifetime;

	private final Duration elapsed;

	private final int attempts;

	private final @Nullable Integer lastStatus;

	IdempotencyKeyExpiredException(String call, String headerName, String key, Duration lifetime, Duration elapsed,
			Duration wait, int attempts, @Nullable Integer lastStatus, @Nullable Throwable lastError) {
		super(message(call, headerName, key, lifetime, elapsed, wait, attempts, lastStatus, lastError), lastError);
		this.key = key;
		this.lifetime = lifetime;
		this.elapsed = elapsed;
		this.attempts = attempts;
		this.lastStatus = lastStatus;
	}

	private static String message(String call, String headerName, String key, Duration lifetime, Duration elapsed,
			Duration wait, int attempts, @Nullable Integer lastStatus, @Nullable Throwable lastError) {
		String last = (lastStatus != null) ? "answer " + lastStatus : "I/O error: " + lastError;
		return "Not retrying " + call + " with " + headerName + " " + key + ": key lifetime " + lifetime + " passed ("
				+ elapsed + " elapsed since the first attempt, the next attempt due in " + wait + "); the server may"
				+ " have forgotten the key and would run the request again. Outcome unknown after " + attempts
				+ " attempt(s), the last one's " + last;
	}

	/** The key the call was sent with. */
	public String getKey() {
		return this.key;
	}

	/** The key lifetime the interceptor was configured with. */
	public Duration getLifetime() {
		return this.lifetime;
	}

	/** The time from the first attempt's start to the decision to stop. */
	public Duration getElapsed() {
		return this.elapsed;
	}

	/** The attempts made, the first included. */
	public int getAttempts() {
		return this.attempts;
	}

	/**
	 * The last attempt's HTTP status, or {@code null} when it ended in an I/O error (the
	 * cause).
	 */
	public @Nullable Integer getLastStatus() {
		return this.lastStatus;
	}

}
