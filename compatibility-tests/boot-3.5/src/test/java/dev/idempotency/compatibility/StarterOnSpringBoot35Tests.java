package dev.idempotency.compatibility;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * A Spring Boot 3.5 web application with the starter added: the start-up stops with a
 * report that names the supported Boot versions, instead of the bean definition clash the
 * starter's Boot 4 modules cause ("The bean 'jsonComponentModule' ... could not be
 * registered").
 */
@ExtendWith(OutputCaptureExtension.class)
class StarterOnSpringBoot35Tests {

	@Test
	void theStartUpFailsWithAReportNamingTheSupportedVersions(CapturedOutput output) {
		String version = SpringBootVersion.getVersion();
		assertThat(version).isEqualTo(System.getProperty("expected.spring-boot.version")).startsWith("3.5.");
		assertThatException().isThrownBy(() -> SpringApplication.run(App.class, "--server.port=0"));
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("idempotency-spring-boot-starter supports Spring Boot 4.0.x and 4.1.x."
					+ " This application runs Spring Boot " + version)
			.contains("Upgrade the application to Spring Boot 4.0.x and 4.1.x")
			.doesNotContain("jsonComponentModule");
	}

	@SpringBootApplication
	static class App {

	}

}
