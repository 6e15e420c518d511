package dev.idempotency.web;

import java.time.Clock;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

import dev.idempotency.IdempotencyRejectedException;
import dev.idempotency.core.IdempotencyListener;
import dev.idempotency.core.IdempotencySettings;
import dev.idempotency.core.internal.IdempotencyEngine;
import dev.idempotency.store.memory.InMemoryIdempotencyStore;
import dev.idempotency.test.TestKeys;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AfterContainer;

import org.springframework.http.converter.json.JacksonJsonHttpMessageConverter;
import org.springframework.mock.web.MockFilterChain;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;
import org.springframework.web.method.HandlerMethod;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Hostile Idempotency-Key headers through the real filter and interceptor: every
 * malformed key is answered 400 with a problem body, nothing is stored and the handler
 * never runs.
 */
class HostileKeyPropertyTests {

	private static final InMemoryIdempotencyStore store = InMemoryIdempotencyStore.builder()
		.clock(Clock.systemUTC())
		.maxEntries(1000)
		.maxSharePerScope(1.0)
		.onFull(InMemoryIdempotencyStore.OnFull.REFUSE)
		.build();

	private static final IdempotencyEngine engine = new IdempotencyEngine(store, IdempotencySettings.defaults(),
			Clock.systemUTC(), IdempotencyListener.NONE);

	private static final IdempotencyFilter filter = new IdempotencyFilter(engine, "Idempotency-Key", List.of());

	private static final IdempotencyInterceptor interceptor = new IdempotencyInterceptor(engine,
			new PrincipalScopeResolver(), "urn:p:", "Idempotency-Key", List.of(), false,
			IdempotencyInterceptor.DEFAULT_MAX_REQUEST_BYTES);

	/**
	 * What Spring MVC does with the interceptor's refusals when the application does not
	 * handle them.
	 */
	private static final IdempotencyErrorExceptionResolver resolver = new IdempotencyErrorExceptionResolver(
			() -> List.of(new JacksonJsonHttpMessageConverter()), null);

	private static final AtomicInteger handlerRuns = new AtomicInteger();

	@AfterContainer
	static void close() {
		engine.close();
	}

	@Property(tries = 400)
	void randomStringsAreRejected(@ForAll("garbage") String key) throws Exception {
		assertRejected(List.of(key));
	}

	@Property(tries = 200)
	void uuidsOfEveryOtherVersionOrVariantAreRejected(@ForAll("wrongVersionOrVariant") String key) throws Exception {
		assertRejected(List.of(key));
	}

	@Property(tries = 100)
	void severalHeadersAreRejectedEvenIfEachIsValid(@ForAll("validKeys") String first,
			@ForAll("validKeys") String second) throws Exception {
		assertRejected(List.of(first, second));
	}

	@Property(tries = 20)
	void hugeValuesAreRejected(@ForAll("huge") String key) throws Exception {
		assertRejected(List.of(key));
	}

	private static void assertRejected(List<String> keys) throws Exception {
		int runsBefore = handlerRuns.get();
		MockHttpServletRequest request = new MockHttpServletRequest("POST", "/things");
		request.setContent("{\"a\":1}".getBytes());
		keys.forEach((key) -> request.addHeader("Idempotency-Key", key));
		MockHttpServletResponse response = new MockHttpServletResponse();
		HandlerMethod handler = new HandlerMethod(new Handler(), Handler.class.getMethod("create"));
		MockFilterChain chain = new MockFilterChain(new jakarta.servlet.http.HttpServlet() {
			@Override
			protected void service(jakarta.servlet.http.HttpServletRequest req,
					jakarta.servlet.http.HttpServletResponse res) throws java.io.IOException {
				try {
					if (interceptor.preHandle(req, res, handler)) {
						handlerRuns.incrementAndGet();
						res.setStatus(201);
					}
				}
				catch (IdempotencyRejectedException ex) {
					assertThat(resolver.resolveException(req, res, handler, ex)).as("resolved").isNotNull();
				}
				catch (Exception ex) {
					throw new java.io.IOException(ex);
				}
			}
		});
		filter.doFilter(request, response, chain);
		assertThat(response.getStatus()).as("status for %s", keys).isEqualTo(400);
		assertThat(response.getContentType()).isEqualTo("application/problem+json");
		assertThat(response.getContentAsString()).contains("\"type\":\"urn:p:invalid-key\"").contains("\"detail\":");
		assertThat(handlerRuns.get()).isEqualTo(runsBefore);
		assertThat(store.size()).as("nothing stored").isZero();
	}

	@Provide
	Arbitrary<String> garbage() {
		return Arbitraries.oneOf(Arbitraries.strings().ofMaxLength(80),
				Arbitraries.strings().all().ofMinLength(1).ofMaxLength(40),
				Arbitraries.strings().withChars("0123456789abcdefABCDEF-\"{} ").ofMinLength(30).ofMaxLength(40),
				Arbitraries.strings().withCharRange('\u0080', '\uffff').ofLength(36));
	}

	@Provide
	Arbitrary<String> wrongVersionOrVariant() {
		Arbitrary<Integer> version = Arbitraries.integers().between(0, 15);
		Arbitrary<Integer> variant = Arbitraries.integers().between(0, 15);
		return net.jqwik.api.Combinators.combine(version, variant)
			.filter((v, w) -> v != 7 || w < 8 || w > 11)
			.as((v, w) -> {
				char[] chars = UUID.randomUUID().toString().toCharArray();
				chars[14] = Character.forDigit(v, 16);
				chars[19] = Character.forDigit(w, 16);
				return new String(chars);
			});
	}

	@Provide
	Arbitrary<String> validKeys() {
		return Arbitraries.create(TestKeys::newKey);
	}

	@Provide
	Arbitrary<String> huge() {
		return Arbitraries.integers().between(1_000, 200_000).map("a"::repeat);
	}

	public static class Handler {

		@dev.idempotency.Idempotent
		public void create() {
		}

	}

}
