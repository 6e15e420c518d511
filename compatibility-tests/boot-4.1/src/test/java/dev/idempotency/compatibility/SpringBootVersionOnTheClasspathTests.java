package dev.idempotency.compatibility;

import io.lettuce.core.RedisClient;
import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringBootVersion;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.webmvc.autoconfigure.WebMvcAutoConfiguration;
import org.springframework.core.SpringVersion;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The auto-configuration's tests in this module run on Spring Boot 4.1: the jars on the
 * classpath are the ones this module's parent manages (passed in by the pom), not the
 * project's Boot 4.0 ones.
 */
class SpringBootVersionOnTheClasspathTests {

	@Test
	void springBootIsTheVersionOfThisModulesParent() {
		String expected = System.getProperty("expected.spring-boot.version");
		assertThat(expected).startsWith("4.1.");
		assertThat(SpringBootVersion.getVersion()).isEqualTo(expected);
		assertThat(jarVersion(AutoConfiguration.class)).as("spring-boot-autoconfigure").isEqualTo(expected);
		assertThat(jarVersion(WebMvcAutoConfiguration.class)).as("spring-boot-webmvc").isEqualTo(expected);
	}

	@Test
	void springFrameworkAndLettuceAreTheOnesBoot41Manages() {
		assertThat(SpringVersion.getVersion()).isEqualTo(System.getProperty("expected.spring-framework.version"));
		// Lettuce's jar says "7.5.2.RELEASE/<commit>"
		assertThat(jarVersion(RedisClient.class)).startsWith(System.getProperty("expected.lettuce.version") + "/");
	}

	private static String jarVersion(Class<?> type) {
		return type.getPackage().getImplementationVersion();
	}

}
