package dev.idempotency.webflux;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Reports the WebFlux handlers whose {@code @Idempotent} no door protects as "APPLICATION
 * FAILED TO START", each with its mapping, and the ways out. Registered in
 * META-INF/spring.factories.
 */
class UnprotectedIdempotentHandlersFailureAnalyzer
		extends AbstractFailureAnalyzer<UnprotectedIdempotentHandlersException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, UnprotectedIdempotentHandlersException cause) {
		String description = "This is a WebFlux application, and the starter's HTTP door serves Spring MVC only:"
				+ " these @Idempotent handlers would run again on every retry, so the start-up stops instead of"
				+ " leaving them unprotected:\n\n    " + String.join("\n    ", cause.handlers());
		String action = "Run the application on Spring MVC (spring-boot-starter-webmvc instead of"
				+ " spring-boot-starter-webflux), or remove @Idempotent from these handlers. A bean method that"
				+ " returns its result itself (not a Mono or Flux) can be protected by the method door with"
				+ " @Idempotent(key = \"...\"). Setting idempotency.enabled=false turns the whole starter off.";
		return new FailureAnalysis(description, action, cause);
	}

}
