package dev.idempotency.web;

import java.io.IOException;
import java.net.URI;
import java.util.List;
import java.util.function.Supplier;

import dev.idempotency.IdempotencyRejectedException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.converter.HttpMessageConverter;
import org.springframework.http.server.ServletServerHttpResponse;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.ModelAndView;

/**
 * Answers an {@link IdempotencyRejectedException} (of either door) that nothing else
 * handled: with its status and {@code Retry-After}, and its problem detail written as
 * {@code application/problem+json} by Spring MVC's message converters (so with the
 * application's JSON mapper), {@code instance} the request path; or, when the application
 * declares one, by its {@link IdempotencyErrorRenderer}. The HTTP door also answers
 * through it a request it refuses after the handler ran (its transaction did not commit).
 */
class IdempotencyErrorExceptionResolver implements HandlerExceptionResolver {

	private static final Log logger = LogFactory.getLog(IdempotencyErrorExceptionResolver.class);

	private final Supplier<List<HttpMessageConverter<?>>> messageConverters;

	private final @Nullable IdempotencyErrorRenderer renderer;

	/**
	 * @param messageConverters Spring MVC's message converters, asked when an error is
	 * written
	 * @param renderer the application's renderer, or {@code null} for problem details
	 */
	IdempotencyErrorExceptionResolver(Supplier<List<HttpMessageConverter<?>>> messageConverters,
			@Nullable IdempotencyErrorRenderer renderer) {
		this.messageConverters = messageConverters;
		this.renderer = renderer;
	}

	@Override
	public @Nullable ModelAndView resolveException(HttpServletRequest request, HttpServletResponse response,
			@Nullable Object handler, Exception ex) {
		if (!(ex instanceof IdempotencyRejectedException refused)) {
			return null;
		}
		try {
			render(refused, request, response);
			return new ModelAndView();
		}
		catch (IOException failure) {
			logger.debug("Could not write the idempotency error " + refused.getMessage(), failure);
			return null;
		}
	}

	/**
	 * Writes the refusal to the response: its headers ({@code Retry-After}), then the
	 * application's renderer or the problem detail.
	 * @param refused the refusal
	 * @param request the request refused
	 * @param response where to write; nothing of it may be committed yet
	 * @throws IOException if the response could not be written
	 */
	void render(IdempotencyRejectedException refused, HttpServletRequest request, HttpServletResponse response)
			throws IOException {
		refused.getHeaders().forEach((name, values) -> {
			response.setHeader(name, values.get(0));
			values.stream().skip(1).forEach((value) -> response.addHeader(name, value));
		});
		if (this.renderer != null) {
			this.renderer.render(refused.error(), request, response);
			return;
		}
		response.setStatus(refused.getStatusCode().value());
		ProblemDetail problem = refused.getBody();
		if (problem.getInstance() == null) {
			try {
				problem.setInstance(URI.create(request.getRequestURI()));
			}
			catch (IllegalArgumentException ex) {
				// A path the servlet container let through but java.net.URI refuses: the
				// problem goes without its instance rather than without its body.
			}
		}
		write(problem, response);
	}

	@SuppressWarnings("unchecked")
	private void write(ProblemDetail problem, HttpServletResponse response) throws IOException {
		for (HttpMessageConverter<?> converter : this.messageConverters.get()) {
			if (converter.canWrite(ProblemDetail.class, MediaType.APPLICATION_PROBLEM_JSON)) {
				ServletServerHttpResponse output = new ServletServerHttpResponse(response);
				((HttpMessageConverter<Object>) converter).write(problem, MediaType.APPLICATION_PROBLEM_JSON, output);
				output.flush();
				return;
			}
		}
		logger.debug("No message converter writes " + MediaType.APPLICATION_PROBLEM_JSON + "; the idempotency error "
				+ problem.getType() + " is answered with its status only");
	}

}
