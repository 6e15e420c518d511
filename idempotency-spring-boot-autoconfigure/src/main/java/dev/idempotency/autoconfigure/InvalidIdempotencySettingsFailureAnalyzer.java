package dev.idempotency.autoconfigure;

import java.util.List;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Reports inconsistent or out-of-range idempotency.* settings as "APPLICATION FAILED TO
 * START" with the properties at fault and what to set: every problem found, one per line.
 * Registered in META-INF/spring.factories.
 */
class InvalidIdempotencySettingsFailureAnalyzer extends AbstractFailureAnalyzer<InvalidIdempotencySettingsException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, InvalidIdempotencySettingsException cause) {
		List<InvalidIdempotencySettingsException.Problem> problems = cause.problems();
		if (problems.size() == 1) {
			return new FailureAnalysis("The Idempotency-Key settings are invalid: " + cause.getMessage() + ".",
					cause.action(), cause);
		}
		StringBuilder description = new StringBuilder("The Idempotency-Key settings are invalid (")
			.append(problems.size())
			.append(" problems):\n");
		StringBuilder action = new StringBuilder();
		for (InvalidIdempotencySettingsException.Problem problem : problems) {
			description.append("\n    - ").append(problem.message()).append('.');
			action.append((action.length() > 0) ? "\n" : "").append("    - ").append(problem.action());
		}
		return new FailureAnalysis(description.toString(), action.toString(), cause);
	}

}
