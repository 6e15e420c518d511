package dev.idempotency.autoconfigure.jdbc;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The start-up WARN about Liquibase 5, in the log as a user sees it, with the version the
 * check reads injected.
 */
@ExtendWith(OutputCaptureExtension.class)
class LiquibaseVersionCheckTests {

	@Test
	void liquibase5IsReportedWithWhyAndHowToPin(CapturedOutput output) {
		assertThat(new LiquibaseVersionCheck(() -> "5.0.4").warnIfNotOpenSource()).isTrue();
		assertThat(output.getOut()).contains("WARN")
			.contains("Liquibase 5.0.4 is on the classpath")
			.contains("Liquibase 5 and newer is not open source (Functional Source License, FSL)")
			.contains("with Spring Boot's parent (4.0.x and 4.1.x alike) set"
					+ " <liquibase.version>4.33.0</liquibase.version> in your pom's <properties>");
	}

	@Test
	void laterMajorVersionsAreReportedToo(CapturedOutput output) {
		assertThat(new LiquibaseVersionCheck(() -> "6.1.0").warnIfNotOpenSource()).isTrue();
		assertThat(output.getOut()).contains("Liquibase 6.1.0 is on the classpath");
	}

	@Test
	void theOpenSourceLineAndUnknownVersionsAreNotReported(CapturedOutput output) {
		for (String version : new String[] { "4.33.0", "4.29.2", "DEV" }) {
			assertThat(new LiquibaseVersionCheck(() -> version).warnIfNotOpenSource()).as(version).isFalse();
		}
		assertThat(new LiquibaseVersionCheck(() -> null).warnIfNotOpenSource()).isFalse();
		assertThat(output.getOut()).doesNotContain("Liquibase");
	}

	@Test
	void theVersionIsReadFromTheLiquibaseOnTheClasspath(CapturedOutput output) {
		// the build pins 4.33.0: the real check reads it and stays silent
		assertThat(LiquibaseVersionCheck.liquibaseVersion()).isEqualTo("4.33.0");
		assertThat(new LiquibaseVersionCheck().warnIfNotOpenSource()).isFalse();
		assertThat(output.getOut()).doesNotContain("Liquibase");
	}

}
