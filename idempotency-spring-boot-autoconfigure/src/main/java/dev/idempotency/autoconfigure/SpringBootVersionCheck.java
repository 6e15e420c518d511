package dev.idempotency.autoconfigure;

import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.SpringBootVersion;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Stops the start-up of an application that runs the starter on Spring Boot 3 or older,
 * before its bean definitions clash (on Boot 3.5 the first symptom is "The bean
 * 'jsonComponentModule' ... could not be registered", which says nothing about the cause:
 * the starter brings Boot 4 modules). {@link UnsupportedSpringBootVersionFailureAnalyzer}
 * turns the exception into a report that names the supported versions.
 * <p>
 * An {@link ApplicationContextInitializer} (registered in META-INF/spring.factories)
 * because initializers run before any configuration class is read, and the interface is
 * the same in Boot 3 and 4. Newer Boot versions than the tested ones are let through.
 */
final class SpringBootVersionCheck implements ApplicationContextInitializer<ConfigurableApplicationContext> {

	/** The Boot lines the build tests the starter on. */
	static final String SUPPORTED = "Spring Boot 4.0.x and 4.1.x";

	private final Supplier<@Nullable String> runningVersion;

	SpringBootVersionCheck() {
		this(SpringBootVersion::getVersion);
	}

	SpringBootVersionCheck(Supplier<@Nullable String> runningVersion) {
		this.runningVersion = runningVersion;
	}

	@Override
	public void initialize(ConfigurableApplicationContext applicationContext) {
		String version = this.runningVersion.get();
		if (version != null && majorOf(version) < 4) {
			throw new UnsupportedSpringBootVersionException(version);
		}
	}

	/** The major version, or {@link Integer#MAX_VALUE} when it cannot be read. */
	private static int majorOf(String version) {
		int dot = version.indexOf('.');
		try {
			return Integer.parseInt((dot < 0) ? version : version.substring(0, dot));
		}
		catch (NumberFormatException ex) {
			return Integer.MAX_VALUE;
		}
	}

	/** The application runs on a Spring Boot version the starter does not support. */
	static final class UnsupportedSpringBootVersionException extends IllegalStateException {

		private final String version;

		UnsupportedSpringBootVersionException(String version) {
			super("idempotency-spring-boot-starter needs " + SUPPORTED + ", but the application runs Spring Boot "
					+ version);
			this.version = version;
		}

		/** The Spring Boot version the application runs. */
		String version() {
			return this.version;
		}

	}

}
