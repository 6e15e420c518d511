package dev.idempotency.method;

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

	/**
	 * The request attribute that keeps the HTTP door from storing the request's answer,
	 * by the name the door reads (its filter's {@code NOT_STORED_ATTRIBUTE}): a contract
	 * of names, so that this door does not depend on the other's classes.
	 * MethodDoorHttpTests checks it over HTTP.
	 */
	private static final String NOT_STORED_ATTRIBUTE = "dev.idempotency.web.IdempotencyFilter.notStored";

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
		this.attributes.setAttribute(NOT_STORED_ATTRIBUTE, reason, RequestAttributes.SCOPE_REQUEST);
	}

}
