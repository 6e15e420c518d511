package dev.idempotency.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.util.StringUtils;

/**
 * Reports a missing (or ambiguous) IdempotencyStore bean as "APPLICATION FAILED TO
 * START", naming idempotency.store.type and what each store needs. Registered in
 * META-INF/spring.factories.
 */
class IdempotencyStoreNotFoundFailureAnalyzer extends AbstractFailureAnalyzer<IdempotencyStoreNotFoundException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, IdempotencyStoreNotFoundException cause) {
		return new FailureAnalysis(
				"The Idempotency-Key support needs one IdempotencyStore bean: " + cause.problem() + ".",
				StringUtils.capitalize(cause.action()) + ".", cause);
	}

}
