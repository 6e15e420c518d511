package dev.idempotency.autoconfigure;

import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.Set;

import dev.idempotency.client.IdempotencyKeyClientInterceptor;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.http.HttpMethod;

/**
 * The client side, under {@code idempotency.client}: the {@code Idempotency-Key}
 * interceptor added to the application's {@code RestClient.Builder} and
 * {@code RestTemplateBuilder}.
 *
 * @since 0.1.0
 */
@ConfigurationProperties("idempotency.client")
public class IdempotencyClientProperties {

	/**
	 * Whether the RestClient and RestTemplate builders get the interceptor that sends a
	 * key with each call of the configured methods and retries that call with the same
	 * key. Off unless asked for: only servers that honour the key make a retried POST
	 * safe.
	 */
	private boolean enabled = false;

	/** The request header that carries the key. */
	private String headerName = "Idempotency-Key";

	/** The HTTP methods that get a key and are retried; other methods pass through. */
	private Set<HttpMethod> methods = new LinkedHashSet<>(Set.of(HttpMethod.POST));

	/** Attempts of one call at most, the first included. */
	private int maxAttempts = 4;

	/**
	 * Wait after the first failed attempt when the answer has no Retry-After; doubled
	 * after each further one (with jitter), up to max-delay.
	 */
	private Duration initialBackoff = Duration.ofMillis(200);

	/**
	 * Longest wait between two attempts. An answer whose Retry-After asks for longer is
	 * returned to the caller instead of being waited for.
	 */
	private Duration maxDelay = Duration.ofSeconds(10);

	/**
	 * The server's key lifetime (Iceberg: idempotency-key-lifetime in GET /v1/config);
	 * the interceptor does not learn it from the server. No attempt starts once this long
	 * has passed since the call's first attempt: the server may have forgotten the key
	 * and would run the operation again. The call fails instead with an
	 * IdempotencyKeyExpiredException naming the lifetime and the time elapsed. The
	 * default is the starter's own server default (idempotency.lifetime).
	 */
	private @Nullable Duration keyLifetime = Duration.ofMinutes(30);

	/**
	 * The interceptor's settings, of properties that
	 * {@link IdempotencyPropertiesValidator} checked.
	 */
	IdempotencyKeyClientInterceptor.Settings toSettings() {
		return new IdempotencyKeyClientInterceptor.Settings(this.headerName, this.methods, this.maxAttempts,
				this.initialBackoff, this.maxDelay, this.keyLifetime);
	}

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public String getHeaderName() {
		return this.headerName;
	}

	public void setHeaderName(String headerName) {
		this.headerName = headerName;
	}

	public Set<HttpMethod> getMethods() {
		return this.methods;
	}

	public void setMethods(Set<HttpMethod> methods) {
		this.methods = methods;
	}

	public int getMaxAttempts() {
		return this.maxAttempts;
	}

	public void setMaxAttempts(int maxAttempts) {
		this.maxAttempts = maxAttempts;
	}

	public Duration getInitialBackoff() {
		return this.initialBackoff;
	}

	public void setInitialBackoff(Duration initialBackoff) {
		this.initialBackoff = initialBackoff;
	}

	public Duration getMaxDelay() {
		return this.maxDelay;
	}

	public void setMaxDelay(Duration maxDelay) {
		this.maxDelay = maxDelay;
	}

	public @Nullable Duration getKeyLifetime() {
		return this.keyLifetime;
	}

	public void setKeyLifetime(@Nullable Duration keyLifetime) {
		this.keyLifetime = keyLifetime;
	}

}
