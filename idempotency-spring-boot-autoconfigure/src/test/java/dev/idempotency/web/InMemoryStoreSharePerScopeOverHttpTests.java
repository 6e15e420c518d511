package dev.idempotency.web;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.security.Principal;
import java.util.ArrayList;
import java.util.List;

import dev.idempotency.test.TestKeys;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.core.Ordered;
import org.springframework.web.filter.OncePerRequestFilter;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * With {@code on-full=refuse}, one principal fills its share of the in-memory store: its
 * new keys are refused 503 with a Retry-After until its oldest record expires, and every
 * other principal is still served, over real HTTP against embedded Tomcat.
 */
@SpringBootTest(classes = { HttpDoorTestApplication.class, InMemoryStoreSharePerScopeOverHttpTests.Principals.class },
		webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
		properties = { "idempotency.store.memory.max-entries=20", "idempotency.store.memory.max-share-per-scope=0.5",
				"idempotency.store.memory.on-full=refuse" })
class InMemoryStoreSharePerScopeOverHttpTests {

	private static final String USER_HEADER = "X-Test-User";

	private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

	@LocalServerPort
	private int port;

	@Autowired
	private HttpDoorTestApplication.GatedController controller;

	@Test
	void aPrincipalThatFillsItsShareIsRefusedWhileOthersAreServed() throws Exception {
		List<String> mallorysKeys = new ArrayList<>();
		for (int i = 0; i < 10; i++) {
			String key = TestKeys.newKey();
			assertThat(post("mallory", key).statusCode()).as("mallory's request " + i).isEqualTo(200);
			mallorysKeys.add(key);
		}
		int runs = this.controller.runs("echo");
		HttpResponse<String> refused = post("mallory", TestKeys.newKey());
		assertThat(refused.statusCode()).isEqualTo(503);
		assertThat(refused.headers().firstValue("Content-Type"))
			.hasValueSatisfying((type) -> assertThat(type).startsWith("application/problem+json"));
		assertThat(refused.body()).contains("store-unavailable").contains("full");
		long retryAfter = Long.parseLong(refused.headers().firstValue("Retry-After").orElseThrow());
		assertThat(retryAfter).as("until mallory's oldest record expires: 35 min after it was made")
			.isBetween(34 * 60L, 35 * 60L);
		assertThat(this.controller.runs("echo")).as("the refused request did not run").isEqualTo(runs);

		for (String user : List.of("alice", "bob")) {
			for (int i = 0; i < 5; i++) {
				String key = TestKeys.newKey();
				HttpResponse<String> first = post(user, key);
				assertThat(first.statusCode()).as(user + "'s request " + i).isEqualTo(200);
				HttpResponse<String> retry = post(user, key);
				assertThat(retry.statusCode()).isEqualTo(200);
				assertThat(retry.headers().firstValue("Idempotent-Replayed")).as(user + "'s retry " + i)
					.hasValue("true");
				assertThat(retry.body()).isEqualTo(first.body());
			}
		}
		HttpResponse<String> mallorysRetry = post("mallory", mallorysKeys.get(0));
		assertThat(mallorysRetry.headers().firstValue("Idempotent-Replayed"))
			.as("mallory's stored answers are still replayed")
			.hasValue("true");
	}

	private HttpResponse<String> post(String user, String key) throws IOException, InterruptedException {
		return this.http.send(HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + "/echo"))
			.header("Content-Type", "text/plain")
			.header("Idempotency-Key", key)
			.header(USER_HEADER, user)
			.POST(HttpRequest.BodyPublishers.ofString("hello from " + user))
			.build(), HttpResponse.BodyHandlers.ofString());
	}

	/** The principal named by a header, set before the idempotency filter runs. */
	@TestConfiguration(proxyBeanMethods = false)
	static class Principals {

		@Bean
		FilterRegistrationBean<OncePerRequestFilter> principalFromHeaderFilter() {
			FilterRegistrationBean<OncePerRequestFilter> registration = new FilterRegistrationBean<>(
					new OncePerRequestFilter() {

						@Override
						protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response,
								FilterChain chain) throws ServletException, IOException {
							String user = request.getHeader(USER_HEADER);
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

	}

}
