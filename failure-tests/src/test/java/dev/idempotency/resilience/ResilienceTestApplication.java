package dev.idempotency.resilience;

import java.io.IOException;
import java.net.URI;
import java.security.Principal;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import dev.idempotency.Idempotent;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.core.Ordered;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * One node of the resilience tests: a real web server whose handlers count their runs per
 * idempotency key. Started in the test JVM (several at once) and, for the crash test, as
 * a JVM of its own through {@link #main}.
 */
@SpringBootConfiguration
// Boot's own Liquibase would look for an application changelog; the store applies its
// own.
@EnableAutoConfiguration(excludeName = "org.springframework.boot.liquibase.autoconfigure.LiquibaseAutoConfiguration")
public class ResilienceTestApplication {

	/**
	 * Request header naming the caller: the test's stand-in for an authenticated
	 * principal.
	 */
	static final String USER_HEADER = "X-Test-User";

	/**
	 * Request header that makes {@code /slow} sleep; headers are not part of the
	 * fingerprint.
	 */
	static final String DELAY_HEADER = "X-Test-Delay-Millis";

	/**
	 * Request header that makes {@code /slow} sleep through interrupts, as a handler
	 * blocked where an interrupt does not reach (a socket read, a busy computation).
	 */
	static final String IGNORE_INTERRUPTS_HEADER = "X-Test-Ignore-Interrupts";

	public static void main(String[] args) {
		SpringApplication.run(ResilienceTestApplication.class, args);
	}

	@Bean
	SimpleMeterRegistry meterRegistry() {
		return new SimpleMeterRegistry();
	}

	/** Runs before the idempotency filter, as a security filter would. */
	@Bean
	FilterRegistrationBean<OncePerRequestFilter> principalFromHeaderFilter() {
		FilterRegistrationBean<OncePerRequestFilter> registration = new FilterRegistrationBean<>(
				new OncePerRequestFilter() {

					@Override
					protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response,
							FilterChain chain) throws ServletException, IOException {
						String user = request.getHeader(USER_HEADER);
						if (user == null) {
							chain.doFilter(request, response);
							return;
						}
						Principal principal = () -> user;
						chain.doFilter(new HttpServletRequestWrapper(request) {

							@Override
							public Principal getUserPrincipal() {
								return principal;
							}

						}, response);
					}

				});
		registration.setOrder(Ordered.HIGHEST_PRECEDENCE);
		return registration;
	}

	@RestController
	static class CountingController {

		private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

		private final String node;

		CountingController(@Value("${test.node-name:node}") String node) {
			this.node = node;
		}

		/**
		 * How often the handler of {@code endpoint} ran for {@code key} (public: the bean
		 * is proxied).
		 */
		public int runs(String endpoint, String key) {
			AtomicInteger count = this.runs.get(endpoint + " " + key);
			return (count != null) ? count.get() : 0;
		}

		private int count(String endpoint, String key) {
			return this.runs.computeIfAbsent(endpoint + " " + key, (k) -> new AtomicInteger()).incrementAndGet();
		}

		@GetMapping("/ping")
		String ping() {
			return this.node;
		}

		/**
		 * A creation that also sets credentials in its response, which must never be
		 * stored.
		 */
		@PostMapping("/orders")
		@Idempotent
		ResponseEntity<Map<String, Object>> create(@RequestBody Map<String, Object> order,
				@RequestHeader(name = "Idempotency-Key", required = false) String key, HttpServletRequest request) {
			int run = count("orders", key);
			Principal principal = request.getUserPrincipal();
			Map<String, Object> body = new LinkedHashMap<>();
			body.put("name", order.get("name"));
			body.put("user", (principal != null) ? principal.getName() : null);
			body.put("node", this.node);
			body.put("run", run);
			return ResponseEntity.created(URI.create("/orders/" + order.get("name")))
				.header("Set-Cookie", "session=secret-of-" + body.get("user"))
				.header("Authorization", "Bearer token-of-" + body.get("user"))
				.header("X-Trace", this.node + "-" + run)
				.body(body);
		}

		@PostMapping("/slow")
		@Idempotent
		Map<String, Object> slow(@RequestHeader(name = "Idempotency-Key", required = false) String key,
				@RequestHeader(name = DELAY_HEADER, defaultValue = "0") long delayMillis,
				@RequestHeader(name = IGNORE_INTERRUPTS_HEADER, defaultValue = "false") boolean ignoreInterrupts)
				throws InterruptedException {
			int run = count("slow", key);
			if (!ignoreInterrupts) {
				Thread.sleep(delayMillis);
			}
			else {
				long end = System.nanoTime() + delayMillis * 1_000_000;
				while (System.nanoTime() - end < 0) {
					try {
						Thread.sleep(Math.max(1, (end - System.nanoTime()) / 1_000_000));
					}
					catch (InterruptedException ex) {
						// Sleeps on, as a handler that does not notice interrupts.
					}
				}
			}
			return Map.of("node", this.node, "run", run);
		}

		/**
		 * {@code bytes} bytes of a repeating, position-dependent pattern, so truncation
		 * would show.
		 */
		@PostMapping(path = "/big", produces = MediaType.TEXT_PLAIN_VALUE)
		@Idempotent
		String big(@RequestParam int bytes, @RequestHeader(name = "Idempotency-Key", required = false) String key) {
			count("big", key);
			return pattern(bytes);
		}

		static String pattern(int bytes) {
			StringBuilder text = new StringBuilder(bytes);
			for (int i = 0; i < bytes; i++) {
				text.append((char) ('a' + (i * 7 + i / 26) % 26));
			}
			return text.toString();
		}

	}

}
