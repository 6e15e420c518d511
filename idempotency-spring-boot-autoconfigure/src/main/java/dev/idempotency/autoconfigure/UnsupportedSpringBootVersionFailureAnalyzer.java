package dev.idempotency.autoconfigure;

import dev.idempotency.autoconfigure.SpringBootVersionCheck.UnsupportedSpringBootVersionException;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Reports the starter on an unsupported Spring Boot version as "APPLICATION FAILED TO
 * START", with the supported versions and the way out. Registered in
 * META-INF/spring.factories; it uses only what Boot 3 and 4 both have, so that it runs
 * where it is needed.
 */
final class UnsupportedSpringBootVersionFailureAnalyzer
		extends AbstractFailureAnalyzer<UnsupportedSpringBootVersionException> {

	@Override
	protected FailureAnalysis analyze(Throwable rootFailure, UnsupportedSpringBootVersionException cause) {
		return new FailureAnalysis(
				"idempotency-spring-boot-starter supports " + SpringBootVersionCheck.SUPPORTED
						+ ". This application runs Spring Boot " + cause.version()
						+ ", on which the starter's Spring Boot 4 modules clash with Boot's own.",
				"Upgrade the application to " + SpringBootVersionCheck.SUPPORTED
						+ " (spring-boot-starter-parent or spring-boot-dependencies 4.0.x or 4.1.x),"
						+ " or remove idempotency-spring-boot-starter.",
				cause);
	}

}
