package dev.idempotency.method;

import dev.idempotency.web.IdempotencyFilter;
import org.jspecify.annotations.Nullable;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;

/**
 * The web request a protected method is called in, if any, and the method door's touch
 * point with the HTTP door: a request attribute saying that the request's response must
 * not be stored. (The two doors never protect the same call: the HTTP door takes the
 * handlers whose annotation has no key expression, the method door the methods whose
 * annotation has one.)
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
	 * key ({@link IdempotencyFilter#NOT_STORED_ATTRIBUTE}, a constant: referring to it
	 * does not load the filter).
	 * @param reason why, for the log
	 */
	void doNotStoreResponse(String reason) {
		this.attributes.setAttribute(IdempotencyFilter.NOT_STORED_ATTRIBUTE, reason, RequestAttributes.SCOPE_REQUEST);
	}

}
