package dev.idempotency;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import dev.idempotency.core.KeyFormat;

/**
 * Makes an operation safe to retry with an idempotency key: the first request with a key
 * runs it, retries with the same key get the stored answer, and the same key with another
 * request is rejected.
 * <p>
 * On a Spring MVC handler method (or its controller class) without {@link #key()}, the
 * key is the request's {@code Idempotency-Key} header and the stored answer is the HTTP
 * response (the HTTP front door). With {@link #key()}, on any Spring bean method
 * including a handler method, the key is that SpEL expression over the arguments (for
 * example {@code "#command.requestId"}) and the stored answer is the method's return
 * value (the method front door); the header is then not consulted, so one call is
 * protected once, by one door.
 * <p>
 * On a class it applies to each of its methods. Both doors refuse a call by throwing an
 * {@link IdempotencyRejectedException}, which Spring MVC answers as a problem.
 *
 * @since 0.1.0
 */
@Target({ ElementType.METHOD, ElementType.TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface Idempotent {

	/**
	 * Name of the operation, kept with the record for diagnostics and metrics. Defaults
	 * to {@code SimpleClassName.methodName}.
	 */
	String operation() default "";

	/**
	 * Whether a call without a key is refused ({@code 400 key-required}) instead of
	 * running unprotected. Both doors: over HTTP a request without the header; on the
	 * method door a call whose {@link #key()} expression yields {@code null}, refused
	 * with an {@link IdempotencyRejectedException}. Without it such a call runs
	 * unprotected (on the method door with a WARN log and the {@code null_key} outcome
	 * counted).
	 */
	boolean keyRequired() default false;

	/**
	 * SpEL expression over the method's arguments ({@code #name} or {@code #p0}) that
	 * yields the key, for the method front door. The key is the value's
	 * {@code toString()}: by default 1 to 255 visible ASCII characters (see
	 * {@link #keyFormat()}), any other is refused ({@code 400 invalid-key}). On a handler
	 * method it replaces the header: the HTTP front door leaves the method to the method
	 * front door.
	 */
	String key() default "";

	/**
	 * SpEL expression over the method's arguments whose value identifies a call, for the
	 * method front door: the key reused with a call whose value differs is refused
	 * ({@code 422 key-reused}). Without it a call is identified by all of its arguments,
	 * read field by field (whatever the application's JSON mapper writes), and a method
	 * with an argument whose state the door cannot read (a stream, a file, a JDK class
	 * that is not a value, a class extending one) fails the start-up: name what
	 * identifies its calls here instead, such as {@code "{#orderId, #upload.name}"}. The
	 * value must be of a type the door reads (values, enums, arrays, collections, maps,
	 * records and classes of such fields), or the call fails without running. Only with
	 * {@link #key()}: the HTTP front door fingerprints the request itself.
	 */
	String fingerprint() default "";

	/**
	 * The format of this operation's keys: {@code UUID_V7} (with the key-age window),
	 * {@code UUID} (any RFC 9562 UUID; the window applies to a UUIDv7) or {@code OPAQUE}
	 * (1 to 255 visible ASCII characters, no window). {@link KeyFormat#DEFAULT} (the
	 * default) means {@code idempotency.key.format} for the header (HTTP door) and
	 * {@code OPAQUE} for a {@link #key()} expression (method door).
	 */
	KeyFormat keyFormat() default KeyFormat.DEFAULT;

}
