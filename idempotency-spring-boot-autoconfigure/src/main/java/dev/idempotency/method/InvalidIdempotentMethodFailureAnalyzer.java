package dev.idempotency.method;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Reports an {@code @Idempotent} method that the method door cannot protect (a key or
 * fingerprint expression that does not parse, arguments it cannot compare, a result that
 * cannot be replayed) as "APPLICATION FAILED TO START", naming the bean, the method, the
 * expression and the reason. Registered in META-INF/spring.factories.
 */
class InvalidIdempotentMethodFailureAnalyzer extends AbstractFailureAnalyzer<InvalidIdempotentMethodException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, InvalidIdempotentMethodException cause) {
		StringBuilder description = new StringBuilder("The @Idempotent method ").append(cause.method())
			.append(" of bean '")
			.append(cause.beanName())
			.append("' cannot be protected:\n\n");
		if (cause.expression() != null) {
			description.append("    ")
				.append(cause.attribute())
				.append(" expression: ")
				.append(cause.expression())
				.append('\n');
		}
		description.append("    reason: ").append(cause.reason());
		return new FailureAnalysis(description.toString(), cause.action(), cause);
	}

}
