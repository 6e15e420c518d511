package dev.idempotency.autoconfigure;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * The start-up check of the Spring Boot version, in a real SpringApplication run with the
 * version it reads injected (the build's Boot 3.5 run in compatibility-tests/boot-3.5
 * shows it on a real Boot 3.5 classpath).
 */
@ExtendWith(OutputCaptureExtension.class)
class SpringBootVersionCheckTests {

	@Test
	void onSpringBoot3TheStartUpFailsWithAReportNamingTheSupportedVersions(CapturedOutput output) {
		SpringApplication application = application("3.5.8");
		assertThatException().isThrownBy(application::run);
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("Description:\n\nidempotency-spring-boot-starter supports Spring Boot 4.0.x and 4.1.x."
					+ " This application runs Spring Boot 3.5.8")
			.contains("Action:\n\nUpgrade the application to Spring Boot 4.0.x and 4.1.x");
	}

	@Test
	void theRunningVersionIsReadFromSpringBootItself() {
		SpringApplication application = new SpringApplication(App.class);
		application.setWebApplicationType(WebApplicationType.NONE);
		// the check registered in spring.factories reads the real version and passes
		assertThat(application.getInitializers()).hasAtLeastOneElementOfType(SpringBootVersionCheck.class);
		assertThat(SpringBootVersion.getVersion()).startsWith("4.");
		try (ConfigurableApplicationContext context = application.run()) {
			assertThat(context.isActive()).isTrue();
		}
	}

	@Test
	void supportedNewerAndUnknownVersionsStart() {
		for (String version : new String[] { "4.0.7", "4.1.2", "4.2.0", "5.0.0-M1", "unknown" }) {
			try (ConfigurableApplicationContext context = application(version).run()) {
				assertThat(context.isActive()).as(version).isTrue();
			}
		}
		try (ConfigurableApplicationContext context = application(null).run()) {
			assertThat(context.isActive()).as("version not known").isTrue();
		}
	}

	private static SpringApplication application(String version) {
		SpringApplication application = new SpringApplication(App.class);
		application.setWebApplicationType(WebApplicationType.NONE);
		application.setInitializers(
				application.getInitializers().stream().filter((i) -> !(i instanceof SpringBootVersionCheck)).toList());
		application.addInitializers(new SpringBootVersionCheck(() -> version));
		return application;
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration(IdempotencyAutoConfiguration.class)
	static class App {

	}

}
