package dev.idempotency.autoconfigure;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Properties that cannot work together or values out of range, found at start-up when the
 * idempotency.* properties are checked and mapped to the engine's settings. Names, for
 * each {@link Problem}, the properties at fault, their values, why they cannot work and
 * what to set, for {@link InvalidIdempotencySettingsFailureAnalyzer}. Every problem found
 * is reported at once.
 * <p>
 * Thrown at start-up, when the context is refreshed, for the idempotency.* properties the
 * client's included; an application's test of its own configuration can assert on it and
 * on its {@link #problems()} (the properties named are the property names as set, such as
 * {@code idempotency.lease}). A store auto-configuration of your own may throw it too, so
 * that its problems are reported the same way.
 *
 * @since 0.1.0
 */
public class InvalidIdempotencySettingsException extends IllegalArgumentException {

	private final List<Problem> problems;

	/** One problem. */
	public InvalidIdempotencySettingsException(List<String> properties, String message, String action) {
		this(List.of(new Problem(properties, message, action)));
	}

	/** Every problem found, at least one. */
	public InvalidIdempotencySettingsException(List<Problem> problems) {
		super(message(problems));
		this.problems = List.copyOf(problems);
	}

	private static String message(List<Problem> problems) {
		if (problems.isEmpty()) {
			throw new IllegalArgumentException("At least one problem");
		}
		if (problems.size() == 1) {
			return problems.get(0).message();
		}
		List<String> messages = new ArrayList<>();
		for (Problem problem : problems) {
			messages.add(problem.message());
		}
		return problems.size() + " problems: " + String.join("; ", messages);
	}

	/** The problems, in the order they were found. */
	public List<Problem> problems() {
		return this.problems;
	}

	/** The properties at fault, such as {@code idempotency.lease}, of every problem. */
	public List<String> properties() {
		Set<String> properties = new LinkedHashSet<>();
		for (Problem problem : this.problems) {
			properties.addAll(problem.properties());
		}
		return List.copyOf(properties);
	}

	/** What to change, in words: one line per problem. */
	public String action() {
		List<String> actions = new ArrayList<>();
		for (Problem problem : this.problems) {
			actions.add(problem.action());
		}
		return String.join("\n", actions);
	}

	/**
	 * One setting, or one combination of settings, that cannot work.
	 *
	 * @param properties the properties at fault, such as {@code idempotency.lease}
	 * @param message the properties with their values and why they cannot work
	 * @param action what to set, in words
	 */
	public record Problem(List<String> properties, String message, String action) {

		public Problem {
			properties = List.copyOf(properties);
		}

	}

}
