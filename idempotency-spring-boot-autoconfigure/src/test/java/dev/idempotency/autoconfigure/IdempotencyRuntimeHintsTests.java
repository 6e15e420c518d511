package dev.idempotency.autoconfigure;

import java.io.IOException;
import java.io.InputStream;

import org.junit.jupiter.api.Test;

import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.beans.factory.aot.AotServices;
import org.springframework.beans.factory.aot.BeanRegistrationAotProcessor;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a native image needs of the starter's own jar: the hints registered through
 * {@code META-INF/spring/aot.factories}, as Spring's AOT processing loads them.
 */
class IdempotencyRuntimeHintsTests {

	@Test
	void changelogAndRedisScriptsAreIncludedInANativeImage() throws IOException {
		RuntimeHints hints = new RuntimeHints();
		AotServices.factories(getClass().getClassLoader())
			.load(RuntimeHintsRegistrar.class)
			.forEach((registrar) -> registrar.registerHints(hints, getClass().getClassLoader()));

		for (String resource : new String[] { "db/idempotency/changelog-master.yaml",
				"dev/idempotency/store/redis/idempotency-scripts.lua" }) {
			assertThat(RuntimeHintsPredicates.resource().forResource(resource)).as(resource).accepts(hints);
			try (InputStream in = getClass().getClassLoader().getResourceAsStream(resource)) {
				assertThat(in).as("the starter's jar holds " + resource).isNotNull();
			}
		}
	}

	@Test
	void methodDoorHintsAreRegisteredForAotProcessing() {
		assertThat(AotServices.factories(getClass().getClassLoader()).load(BeanRegistrationAotProcessor.class))
			.anyMatch((processor) -> processor.getClass()
				.getName()
				.equals("dev.idempotency.method.IdempotentMethodHints"));
	}

}
