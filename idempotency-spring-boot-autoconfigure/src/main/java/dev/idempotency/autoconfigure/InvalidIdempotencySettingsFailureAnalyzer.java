package dev.idempotency.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Reports inconsistent or out-of-range idempotency.* durations and sizes as "APPLICATION
 * FAILED TO START" with the properties at fault and what to set. Registered in
 * META-INF/spring.factories.
 */
class InvalidIdempotencySettingsFailureAnalyzer extends AbstractFailureAnalyzer<InvalidIdempotencySettingsException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, InvalidIdempotencySettingsException cause) {
		return new FailureAnalysis("The Idempotency-Key settings are invalid: " + cause.getMessage() + ".",
				cause.action(), cause);
	}

}
