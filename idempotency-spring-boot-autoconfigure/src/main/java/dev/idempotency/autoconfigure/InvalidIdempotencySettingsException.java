package dev.idempotency.autoconfigure;

import java.util.List;

/**
 * Properties that cannot work together or a value out of range, found at start-up when
 * the idempotency.* properties are checked and mapped to the engine's settings. Names the
 * properties at fault and what to set, for
 * {@link InvalidIdempotencySettingsFailureAnalyzer}.
 * <p>
 * Internal: a start-up failure that applications do not catch; public because the store
 * auto-configurations, in sub-packages, throw it (see docs/api.md).
 *
 * @since 0.1.0
 */
public class InvalidIdempotencySettingsException extends IllegalArgumentException {

	private final List<String> properties;

	private final String action;

	public InvalidIdempotencySettingsException(List<String> properties, String message, String action) {
		super(message);
		this.properties = List.copyOf(properties);
		this.action = action;
	}

	/** The properties at fault, such as {@code idempotency.lease}. */
	public List<String> properties() {
		return this.properties;
	}

	/** What to change, in words. */
	public String action() {
		return this.action;
	}

}
