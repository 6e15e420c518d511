package dev.idempotency.web;

import java.io.IOException;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpHeaders;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.ModelAndView;

/**
 * Answers an {@link IdempotencyErrorException} with the {@link IdempotencyErrorRenderer}:
 * the default writes problem details, an application's renderer its own shape.
 */
public class IdempotencyErrorExceptionResolver implements HandlerExceptionResolver {

	private static final Log logger = LogFactory.getLog(IdempotencyErrorExceptionResolver.class);

	private final IdempotencyErrorRenderer renderer;

	public IdempotencyErrorExceptionResolver(IdempotencyErrorRenderer renderer) {
		this.renderer = renderer;
	}

	@Override
	public @Nullable ModelAndView resolveException(HttpServletRequest request, HttpServletResponse response,
			@Nullable Object handler, Exception ex) {
		if (!(ex instanceof IdempotencyErrorException refused)) {
			return null;
		}
		try {
			String retryAfter = refused.getHeaders().getFirst(HttpHeaders.RETRY_AFTER);
			if (retryAfter != null) {
				response.setHeader(HttpHeaders.RETRY_AFTER, retryAfter);
			}
			this.renderer.render(refused.error(), request, response);
			return new ModelAndView();
		}
		catch (IOException failure) {
			logger.debug("Could not write the idempotency error " + refused.getMessage(), failure);
			return null;
		}
	}

}
