package dev.idempotency.method;

import org.jspecify.annotations.Nullable;

/**
 * An {@link dev.idempotency.Idempotent @Idempotent} method that the method door cannot
 * protect, found when its bean is created: a key expression that does not parse, or a
 * result that cannot be replayed. Names the bean, the method, the expression, the reason
 * and what to change, for the failure analyzer that reports it at start-up.
 * <p>
 * Internal: a start-up failure that applications do not catch; public because the failure
 * analyzer is in the auto-configuration package (see docs/api.md).
 */
class InvalidIdempotentMethodException extends IllegalStateException {

	private final String beanName;

	private final String method;

	private final @Nullable String keyExpression;

	private final String reason;

	private final String action;

	InvalidIdempotentMethodException(String beanName, String method, @Nullable String keyExpression, String reason,
			String action, @Nullable Throwable cause) {
		super("@Idempotent on " + method + " of bean '" + beanName + "'"
				+ ((keyExpression != null) ? " (key = '" + keyExpression + "')" : "") + ": " + reason, cause);
		this.beanName = beanName;
		this.method = method;
		this.keyExpression = keyExpression;
		this.reason = reason;
		this.action = action;
	}

	/** The bean whose class declares the method. */
	public String beanName() {
		return this.beanName;
	}

	/** The method, as {@code com.example.Orders.place(java.lang.String)}. */
	public String method() {
		return this.method;
	}

	/** The key expression as written, {@code null} when it is not at fault. */
	public @Nullable String keyExpression() {
		return this.keyExpression;
	}

	/** What is wrong, in words. */
	public String reason() {
		return this.reason;
	}

	/** What to change, in words. */
	public String action() {
		return this.action;
	}

}
