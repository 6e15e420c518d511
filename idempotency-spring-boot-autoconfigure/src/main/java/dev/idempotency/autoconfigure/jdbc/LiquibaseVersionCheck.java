package dev.idempotency.autoconfigure.jdbc;

import java.util.function.Supplier;

import liquibase.util.LiquibaseUtil;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/**
 * Warns at start-up when the JDBC store would work with Liquibase 5 or newer: Boot 4.0
 * and 4.1 manage Liquibase 5, which is under the Functional Source License (FSL), not an
 * open-source licence, and an application that did not pin the 4.x line would otherwise
 * use it without a word. The starter itself works with either.
 */
final class LiquibaseVersionCheck {

	private static final Log logger = LogFactory.getLog(LiquibaseVersionCheck.class);

	/** The open-source Liquibase version the starter is built and tested with. */
	static final String OPEN_SOURCE_VERSION = "4.33.0";

	private final Supplier<@Nullable String> runningVersion;

	LiquibaseVersionCheck() {
		this(LiquibaseVersionCheck::liquibaseVersion);
	}

	LiquibaseVersionCheck(Supplier<@Nullable String> runningVersion) {
		this.runningVersion = runningVersion;
	}

	/**
	 * Logs a WARN if the Liquibase on the classpath is 5 or newer.
	 * @return whether it warned
	 */
	boolean warnIfNotOpenSource() {
		String version = this.runningVersion.get();
		if (version == null || majorOf(version) < 5) {
			return false;
		}
		logger.warn("Liquibase " + version + " is on the classpath, and the JDBC idempotency store creates its"
				+ " table with it. Liquibase 5 and newer is not open source (Functional Source License, FSL);"
				+ " the starter is built and tested with Liquibase " + OPEN_SOURCE_VERSION + ". To stay on the"
				+ " open-source line, pin it: with Spring Boot's parent (4.0.x and 4.1.x alike) set <liquibase.version>"
				+ OPEN_SOURCE_VERSION + "</liquibase.version> in your pom's <properties>; otherwise manage"
				+ " org.liquibase:liquibase-core " + OPEN_SOURCE_VERSION + " in your build.");
		return true;
	}

	/**
	 * The version of the Liquibase on the classpath, as its build says, or {@code null}
	 * if it does not say.
	 */
	static @Nullable String liquibaseVersion() {
		String version = LiquibaseUtil.getBuildVersion();
		if (version == null || majorOf(version) < 0) {
			version = LiquibaseUtil.class.getPackage().getImplementationVersion();
		}
		return version;
	}

	/** The major version, or -1 when it cannot be read (such as Liquibase's "DEV"). */
	private static int majorOf(String version) {
		int dot = version.indexOf('.');
		try {
			return Integer.parseInt((dot < 0) ? version : version.substring(0, dot));
		}
		catch (NumberFormatException ex) {
			return -1;
		}
	}

}
