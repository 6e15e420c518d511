package dev.idempotency.web;

import org.springframework.boot.autoconfigure.AutoConfigurationImportFilter;
import org.springframework.boot.autoconfigure.AutoConfigurationMetadata;

/**
 * Keeps Boot's R2DBC auto-configuration out of this module's test applications: the R2DBC
 * drivers are on the test classpath for the R2DBC store's tests, and would otherwise give
 * every other application an R2DBC ConnectionFactory (an embedded H2) and a reactive
 * transaction manager, or fail its start-up for want of a URL. The R2DBC suites import it
 * themselves; the auto-configuration tests list it. Registered in the tests'
 * {@code META-INF/spring.factories}.
 */
public class NoR2dbcAutoConfigurationFilter implements AutoConfigurationImportFilter {

	private static final String R2DBC = "org.springframework.boot.r2dbc.autoconfigure.R2dbcAutoConfiguration";

	@Override
	public boolean[] match(String[] autoConfigurationClasses, AutoConfigurationMetadata autoConfigurationMetadata) {
		boolean[] matches = new boolean[autoConfigurationClasses.length];
		for (int i = 0; i < autoConfigurationClasses.length; i++) {
			matches[i] = !R2DBC.equals(autoConfigurationClasses[i]);
		}
		return matches;
	}

}
