package dev.idempotency.method;

import org.jspecify.annotations.Nullable;

/**
 * An {@link dev.idempotency.Idempotent @Idempotent} method that the method door cannot
 * protect, found when its bean is created: a key or fingerprint expression that does not
 * parse, arguments it cannot compare, or a result that cannot be replayed. Names the
 * bean, the method, the expression, the reason and what to change, for the failure
 * analyzer that reports it at start-up.
 * <p>
 * Internal: a start-up failure that applications do not catch; public because the failure
 * analyzer is in the auto-configuration package (see docs/api.md).
 */
class InvalidIdempotentMethodException extends IllegalStateException {

	private final String beanName;

	private final String method;

	private final String attribute;

	private final @Nullable String expression;

	private final String reason;

	private final String action;

	/**
	 * A method refused for a reason other than one of its expressions.
	 */
	InvalidIdempotentMethodException(String beanName, String method, String reason, String action,
			@Nullable Throwable cause) {
		this(beanName, method, "key", null, reason, action, cause);
	}

	/**
	 * @param attribute the attribute of {@code @Idempotent} whose expression is at fault
	 * ({@code key} or {@code fingerprint})
	 * @param expression that expression as written, {@code null} when none is at fault
	 */
	InvalidIdempotentMethodException(String beanName, String method, String attribute, @Nullable String expression,
			String reason, String action, @Nullable Throwable cause) {
		super("@Idempotent on " + method + " of bean '" + beanName + "'"
				+ ((expression != null) ? " (" + attribute + " = '" + expression + "')" : "") + ": " + reason, cause);
		this.beanName = beanName;
		this.method = method;
		this.attribute = attribute;
		this.expression = expression;
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

	/**
	 * The attribute of {@code @Idempotent} whose {@link #expression()} is at fault:
	 * {@code key} or {@code fingerprint}.
	 */
	public String attribute() {
		return this.attribute;
	}

	/** The expression at fault as written, {@code null} when none is. */
	public @Nullable String expression() {
		return this.expression;
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
