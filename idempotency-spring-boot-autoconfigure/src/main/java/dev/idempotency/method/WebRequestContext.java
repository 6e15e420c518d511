package dev.idempotency.method;

import dev.idempotency.IdempotencyRequestAttributes;
import org.jspecify.annotations.Nullable;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;

/**
 * The web request a protected method is called in, if any, and the method door's touch
 * point with the HTTP door: {@link IdempotencyRequestAttributes#NOT_STORED_REASON}, the
 * documented request attribute that keeps the request's response from being stored (so
 * this door depends on no type of the other; MethodDoorHttpTests checks it over HTTP).
 * (The two doors never protect the same call: the HTTP door takes the handlers whose
 * annotation has no key expression, the method door the methods whose annotation has
 * one.)
 */
final class WebRequestContext {

	private final RequestAttributes attributes;

	private WebRequestContext(RequestAttributes attributes) {
		this.attributes = attributes;
	}

	/** The web request of this thread; {@code null} outside one. */
	static @Nullable WebRequestContext current() {
		RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
		return (attributes != null) ? new WebRequestContext(attributes) : null;
	}

	/**
	 * Tells the HTTP door not to store this request's response under the request's own
	 * key.
	 * @param reason why, for the log
	 */
	void doNotStoreResponse(String reason) {
		this.attributes.setAttribute(IdempotencyRequestAttributes.NOT_STORED_REASON, reason,
				RequestAttributes.SCOPE_REQUEST);
	}

}
