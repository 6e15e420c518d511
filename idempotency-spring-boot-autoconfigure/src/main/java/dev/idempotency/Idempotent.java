package dev.idempotency;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Makes an operation safe to retry with an idempotency key: the first request with a key runs it,
 * retries with the same key get the stored answer, and the same key with another request is
 * rejected.
 * <p>
 * On a Spring MVC handler method (or its controller class) the key is the request's
 * {@code Idempotency-Key} header and the stored answer is the HTTP response. On any other Spring
 * bean method, {@link #key()} is a SpEL expression over the arguments (for example
 * {@code "#command.requestId"}) and the stored answer is the method's return value.
 */
@Target({ ElementType.METHOD, ElementType.TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface Idempotent {

	/**
	 * Name of the operation, kept with the record for diagnostics and metrics. Defaults to
	 * {@code SimpleClassName.methodName}.
	 */
	String operation() default "";

	/**
	 * Whether a request without a key is rejected ({@code 400}) instead of running unprotected.
	 * HTTP only.
	 */
	boolean keyRequired() default false;

	/**
	 * Method front door only: SpEL expression over the method's arguments ({@code #name} or
	 * {@code #p0}) that yields the key. Ignored on HTTP handler methods, whose key is the header.
	 */
	String key() default "";

}
