package dev.idempotency.autoconfigure;

import java.util.Map;

import dev.idempotency.Idempotent;
import dev.idempotency.method.IdempotencyMethodAutoConfiguration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/** Start-up errors read as Boot's failure reports, from a real SpringApplication run. */
@ExtendWith(OutputCaptureExtension.class)
class IdempotencyFailureAnalyzersTests {

	@Test
	void inconsistentDurationsAreReportedWithThePropertiesAndTheBound(CapturedOutput output) {
		run(Map.of("idempotency.lease", "4s", "idempotency.heartbeat-interval", "3500ms"));
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("Description:")
			.contains("idempotency.heartbeat-interval (PT3.5S) must be at most half of idempotency.lease (PT4S)")
			.contains("Action:")
			.contains("Set idempotency.heartbeat-interval to at most PT2S or idempotency.lease to at least PT7S.");
	}

	@Test
	void aLeaseLongerThanTheRetentionIsReported(CapturedOutput output) {
		run(Map.of("idempotency.lifetime", "10s", "idempotency.grace", "0s", "idempotency.lease", "20s",
				"idempotency.heartbeat-interval", "5s"));
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains(
					"idempotency.lease (PT20S) must not be longer than idempotency.lifetime + idempotency.grace (PT10S)")
			.contains("Set idempotency.lease to at most PT10S");
	}

	@Test
	void aMissingStoreIsReportedWithTheStoreTypeAndWhatItNeeds(CapturedOutput output) {
		run(Map.of("idempotency.store.type", "jdbc"));
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("Description:")
			.contains("idempotency.store.type=jdbc but no IdempotencyStore bean exists")
			.contains("Action:")
			.contains("Action:\n\nAdd spring-boot-starter-jdbc and a DataSource");
	}

	@Test
	void aStoreBoundThatNothingFitsIsReportedNamingTheProperty(CapturedOutput output) {
		run(Map.of("idempotency.store.memory.max-bytes", "-1B"));
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("idempotency.store.memory.max-bytes must be positive, was -1B")
			.contains("Set idempotency.store.memory.max-bytes to a size such as 1MB");
	}

	@Test
	void aStoreWithoutRoomForOneRecordIsReported(CapturedOutput output) {
		run(Map.of("idempotency.store.memory.max-entries", "0"));
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("idempotency.store.memory.max-entries must be positive, was 0");
	}

	@Test
	void aSharePerScopeOutsideZeroToOneIsReportedNamingTheProperty(CapturedOutput output) {
		run(Map.of("idempotency.store.memory.max-share-per-scope", "25"));
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("idempotency.store.memory.max-share-per-scope must be more than 0 and at most 1, was 25.0")
			.contains("Set idempotency.store.memory.max-share-per-scope to a fraction such as 0.25");
	}

	@Test
	void everyBadValueIsReportedInOneFailureReport(CapturedOutput output) {
		run(Map.of("idempotency.lease", "4s", "idempotency.heartbeat-interval", "3500ms",
				"idempotency.in-flight.poll-interval", "0s", "idempotency.request.max-body-size", "-1B",
				"idempotency.store.memory.max-entries", "0"));
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("Description:\n\nThe Idempotency-Key settings are invalid (4 problems):\n\n"
					+ "    - idempotency.heartbeat-interval (PT3.5S) must be at most half of idempotency.lease (PT4S)")
			.contains("\n    - idempotency.in-flight.poll-interval must be positive, was PT0S.\n"
					+ "    - idempotency.request.max-body-size must be zero or more, was -1B.\n"
					+ "    - idempotency.store.memory.max-entries must be positive, was 0.\n")
			.contains("Action:\n\n    - Set idempotency.heartbeat-interval to at most PT2S or idempotency.lease to at"
					+ " least PT7S.\n    - Set idempotency.in-flight.poll-interval to a positive duration, or remove it for the default.\n"
					+ "    - Set idempotency.request.max-body-size to a size such as 1MB, or remove it for the default.\n"
					+ "    - Set idempotency.store.memory.max-entries to a positive number, or remove it for the default.");
	}

	/**
	 * A header the HTTP door never stores was dropped without a word; now it fails the
	 * start with why, and the headers it does store pass.
	 */
	@Test
	void aStoredHeaderThatIsNeverStoredIsReportedWithWhy(CapturedOutput output) {
		run(Map.of("idempotency.response.stored-headers", "X-Request-Id,Set-Cookie,transfer-encoding"));
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("The Idempotency-Key settings are invalid (2 problems):")
			.contains("    - idempotency.response.stored-headers names Set-Cookie, which the HTTP door never stores:"
					+ " it sets a cookie (a session, a token) for one client, which a replay would hand to every"
					+ " retry with the key.\n")
			.contains("    - idempotency.response.stored-headers names transfer-encoding, which the HTTP door never"
					+ " stores: it is a hop-by-hop header")
			.contains("    - Remove Set-Cookie from idempotency.response.stored-headers.\n")
			.doesNotContain("X-Request-Id,");
	}

	@Test
	void encryptionKeysThatCannotWorkAreReportedWithoutTheirValues(CapturedOutput output) {
		String shortKey = "c2l4dGVlbi1ieXRlLWtleQ==";
		run(Map.of("idempotency.encryption.keys.short", shortKey, "idempotency.encryption.keys.typo", "not base64!",
				"idempotency.encryption.sealing-key-id", "k1"));
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("The Idempotency-Key settings are invalid (3 problems):")
			.contains(
					"    - idempotency.encryption.keys.short is 16 bytes once decoded, and AES-256 needs 32 (its value"
							+ " is not shown).")
			.contains("    - idempotency.encryption.keys.typo is not base64 (its value is not shown).")
			.contains("    - idempotency.encryption.sealing-key-id is 'k1', which is not one of the keys [")
			.contains(
					"    - Set idempotency.encryption.keys.short to the base64 of 32 random bytes (openssl rand -base64"
							+ " 32), from a secret store or an environment variable.")
			.doesNotContain(shortKey)
			.doesNotContain("not base64!");
	}

	@Test
	void keysWithoutTheIdOfTheOneThatSealsAreReported(CapturedOutput output) {
		run(Map.of("idempotency.encryption.keys.k1", "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA="));
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("idempotency.encryption.sealing-key-id must name the key that seals, one of [k1]")
			.contains("Set idempotency.encryption.sealing-key-id to one of [k1].");
	}

	@Test
	void anIdempotentMethodWhoseKeyDoesNotParseIsReportedWithTheBeanMethodAndExpression(CapturedOutput output) {
		SpringApplication application = new SpringApplication(App.class, BrokenMethodApp.class);
		application.setWebApplicationType(WebApplicationType.NONE);
		assertThatException().isThrownBy(application::run);
		assertThat(output).contains("APPLICATION FAILED TO START")
			.contains("Description:\n\nThe @Idempotent method " + BrokenOrders.class.getName()
					+ ".place(java.lang.String) of bean 'brokenOrders' cannot be protected:")
			.contains("    key expression: #orderId +\n")
			.contains("    reason: the key expression does not parse: ")
			.contains("Action:\n\nWrite key as a SpEL expression over the method's arguments, such as"
					+ " \"#command.requestId\" or \"#p0\".");
	}

	private static void run(Map<String, Object> properties) {
		SpringApplication application = new SpringApplication(App.class);
		application.setWebApplicationType(WebApplicationType.NONE);
		application.setDefaultProperties(properties);
		assertThatException().isThrownBy(application::run);
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration(IdempotencyAutoConfiguration.class)
	static class App {

	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ IdempotencyAutoConfiguration.class, IdempotencyMethodAutoConfiguration.class })
	static class BrokenMethodApp {

		@Bean
		BrokenOrders brokenOrders() {
			return new BrokenOrders();
		}

	}

	public static class BrokenOrders {

		@Idempotent(key = "#orderId +")
		public String place(String orderId) {
			return orderId;
		}

	}

}
