package dev.idempotency.sample.catalog.support;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.core.Ordered;
import org.springframework.web.servlet.HandlerInterceptor;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * Holds the first request that carries a given {@code Idempotency-Key} after the
 * starter's interceptor has let it through and before the controller runs, until the test
 * releases it: the operation of that attempt is then "running" for as long as the test
 * needs, without any sleep. Later requests with the same key pass straight through.
 * Import {@link Configuration} to install it.
 */
public final class RequestGate implements HandlerInterceptor {

	private final Map<String, Hold> holds = new ConcurrentHashMap<>();

	/** Holds the next request with this key once it reaches the handler. */
	public Hold holdFirst(String idempotencyKey) {
		Hold hold = new Hold();
		this.holds.put(idempotencyKey, hold);
		return hold;
	}

	@Override
	public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler)
			throws InterruptedException {
		String key = request.getHeader("Idempotency-Key");
		Hold hold = (key != null) ? this.holds.remove(key) : null;
		if (hold != null) {
			hold.entered.countDown();
			// Bounded only so that a failed test cannot hang the build.
			hold.released.await(1, TimeUnit.MINUTES);
		}
		return true;
	}

	/** One held request. */
	public static final class Hold {

		private final CountDownLatch entered = new CountDownLatch(1);

		private final CountDownLatch released = new CountDownLatch(1);

		/** Waits until the held request has reached the handler. */
		public void awaitEntered() throws InterruptedException {
			if (!this.entered.await(1, TimeUnit.MINUTES)) {
				throw new IllegalStateException("the request to hold never reached the handler");
			}
		}

		/** Lets the held request run its operation. */
		public void release() {
			this.released.countDown();
		}

	}

	/**
	 * Registers the gate after the starter's interceptor (which reserves or looks up the
	 * key first).
	 */
	@TestConfiguration(proxyBeanMethods = false)
	public static class Configuration {

		@Bean
		RequestGate requestGate() {
			return new RequestGate();
		}

		@Bean
		WebMvcConfigurer requestGateRegistration(RequestGate gate) {
			return new WebMvcConfigurer() {

				@Override
				public void addInterceptors(InterceptorRegistry registry) {
					registry.addInterceptor(gate).order(Ordered.LOWEST_PRECEDENCE);
				}

			};
		}

	}

}
