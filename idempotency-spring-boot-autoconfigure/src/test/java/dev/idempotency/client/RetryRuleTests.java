package dev.idempotency.client;

import java.time.Clock;
import java.time.Duration;
import java.util.Set;

import org.junit.jupiter.api.RepeatedTest;

import org.springframework.http.HttpMethod;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The waits the clients' retry rule computes without {@code Retry-After}: the configured
 * backoff doubling from its initial value, moved by its jitter, never below the initial
 * backoff, never above {@code max-delay}. Computed, not timed: the clients' tests over
 * HTTP check that a client waits at least this long; how much longer a loaded machine
 * takes to send the next attempt is not the rule's.
 */
class RetryRuleTests {

	/** Each run draws other jitters. */
	@RepeatedTest(50)
	void withoutRetryAfterTheBackoffDoublesWithinItsJitterUpToMaxDelay() {
		IdempotencyKeyClientInterceptor.Settings settings = new IdempotencyKeyClientInterceptor.Settings(
				"Idempotency-Key", Set.of(HttpMethod.POST), 4, Duration.ofMillis(300), Duration.ofMillis(700), null);
		RetryRule rule = new RetryRule(settings, Clock.systemUTC(), "POST http://host/x", "key",
				Clock.systemUTC().instant());
		assertThat(rule.next(1, 500, null, null)).as("300 ms, jitter up to 450 ms")
			.isBetween(Duration.ofMillis(300), Duration.ofMillis(450));
		assertThat(rule.next(2, 502, null, null)).as("600 ms, jitter from 300 ms to max-delay 700 ms")
			.isBetween(Duration.ofMillis(300), Duration.ofMillis(700));
		assertThat(rule.next(3, 504, null, null)).as("1200 ms capped at max-delay 700 ms, jitter from 400 ms")
			.isBetween(Duration.ofMillis(400), Duration.ofMillis(700));
		assertThat(rule.next(4, 500, null, null)).as("after the fourth attempt, no more").isNull();
	}

}
