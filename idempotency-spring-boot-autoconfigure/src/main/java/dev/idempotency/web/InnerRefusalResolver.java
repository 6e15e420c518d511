package dev.idempotency.web;

import dev.idempotency.IdempotencyRejectedException;
import dev.idempotency.IdempotencyRequestAttributes;
import dev.idempotency.core.IdempotencyErrorException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.ModelAndView;

/**
 * Sees, before any other exception resolver, what a protected handler threw, and keeps
 * the HTTP door from storing as the handler's answer a refusal of the starter's own: an
 * {@link IdempotencyRejectedException} of the method door or an
 * {@link IdempotencyErrorException} of the template, called inside the handler (also
 * inside another exception). Such a refusal says something of that inner call (its key
 * reused, still in flight, its store down), not a final answer of the request: it is
 * answered (by the application's exception handling, else by the
 * {@link IdempotencyErrorExceptionResolver}) but not stored, through
 * {@link IdempotencyRequestAttributes#NOT_STORED_REASON}, and the request's key is
 * released, so a retry runs again. Resolves nothing itself. The HTTP door's own refusals,
 * thrown before any reservation, have nothing to release.
 */
class InnerRefusalResolver implements HandlerExceptionResolver {

	@Override
	public @Nullable ModelAndView resolveException(HttpServletRequest request, HttpServletResponse response,
			@Nullable Object handler, Exception ex) {
		if (IdempotentExchange.of(request) != null) {
			for (Throwable cause = ex; cause != null; cause = cause.getCause()) {
				if (cause instanceof IdempotencyRejectedException || cause instanceof IdempotencyErrorException) {
					request.setAttribute(IdempotencyRequestAttributes.NOT_STORED_REASON,
							"a call it made was refused (" + cause.getMessage() + ")");
					break;
				}
			}
		}
		return null;
	}

}
