package dev.idempotency.aspect;

import java.lang.reflect.Method;

import dev.idempotency.web.IdempotencyFilter;
import org.jspecify.annotations.Nullable;
import org.springframework.web.context.request.RequestAttributes;
import org.springframework.web.context.request.RequestContextHolder;

/**
 * The web request a protected method is called in, if any, and the method door's two
 * touch points with the HTTP door, both request attributes: which handler method the HTTP
 * door protects, and that the request's response must not be stored.
 */
final class WebRequestContext {

	/**
	 * The HTTP door's {@code IdempotencyInterceptor.HANDLED_METHOD_ATTRIBUTE}, spelled
	 * out: that class needs the Servlet API, which a method door outside a web
	 * application does not have.
	 */
	private static final String HANDLED_METHOD_ATTRIBUTE = "dev.idempotency.web.IdempotencyInterceptor.method";

	private final RequestAttributes attributes;

	private WebRequestContext(RequestAttributes attributes) {
		this.attributes = attributes;
	}

	/** The web request of this thread; {@code null} outside one. */
	static @Nullable WebRequestContext current() {
		RequestAttributes attributes = RequestContextHolder.getRequestAttributes();
		return (attributes != null) ? new WebRequestContext(attributes) : null;
	}

	/** Whether the HTTP door protects this method, as this request's handler. */
	boolean isProtectedByHttpDoor(Method method) {
		return method.equals(this.attributes.getAttribute(HANDLED_METHOD_ATTRIBUTE, RequestAttributes.SCOPE_REQUEST));
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
