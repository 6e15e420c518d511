package dev.idempotency.engine;

import java.util.List;

/**
 * Settings that cannot work together or a value out of range, found when the settings are
 * built (at start-up, from the idempotency.* properties). Names the properties at fault
 * and what to set.
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
