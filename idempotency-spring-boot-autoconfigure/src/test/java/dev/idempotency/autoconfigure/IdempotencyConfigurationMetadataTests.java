package dev.idempotency.autoconfigure;

import java.io.InputStream;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

import com.zaxxer.hikari.HikariConfig;
import dev.idempotency.autoconfigure.jdbc.IdempotencyJdbcStoreProperties;
import dev.idempotency.autoconfigure.r2dbc.IdempotencyR2dbcStoreProperties;
import dev.idempotency.autoconfigure.redis.IdempotencyRedisStoreProperties;
import dev.idempotency.core.IdempotencySettings;
import org.junit.jupiter.api.Test;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.boot.json.JsonParserFactory;

import static org.assertj.core.api.Assertions.assertThat;

/** The IDE metadata the configuration processor generates, as users see it. */
class IdempotencyConfigurationMetadataTests {

	private final Map<String, Object> metadata = read();

	@Test
	void enumPropertiesOfferTheirValuesInTheDocumentedSpelling() {
		assertThat(hintValues("idempotency.store.type")).containsExactly("memory", "jdbc", "redis", "r2dbc");
		assertThat(hintValues("idempotency.key-age-policy")).containsExactly("reject", "warn");
		assertThat(hintValues("idempotency.in-flight.status")).containsExactly("conflict", "service-unavailable");
		assertThat(hintValues("idempotency.store.failure-mode")).containsExactly("fail-closed", "fail-open");
		assertThat(property("idempotency.store.failure-mode")).containsEntry("defaultValue", "fail-closed");
		assertThat(hintValues("idempotency.store.compression")).containsExactly("auto", "deflate", "none");
		assertThat(property("idempotency.store.compression")).containsEntry("defaultValue", "auto");
		assertThat(property("idempotency.store.compress-from")).containsEntry("defaultValue", "256B");
		assertThat(property("idempotency.in-flight.status")).containsEntry("defaultValue", "conflict");
		assertThat(hintValues("idempotency.mode")).containsExactly("lease", "record-after-success");
		assertThat(hintValues("idempotency.key.format")).containsExactly("uuidv7", "uuid", "opaque");
		assertThat(hintValues("idempotency.fingerprint.json")).containsExactly("bytes", "canonical");
		assertThat(property("idempotency.fingerprint.json")).containsEntry("defaultValue", "bytes");
		assertThat(property("idempotency.key.format")).containsEntry("defaultValue", "uuidv7")
			.containsEntry("type", "dev.idempotency.core.KeyFormat");
		assertThat(property("idempotency.mode")).containsEntry("defaultValue", "lease");
		assertThat(property("idempotency.store.redis.eviction-check")).containsEntry("defaultValue", "warn");
	}

	@Test
	void descriptionsArePlainTextInTheDocumentedSpelling() {
		for (Map<String, Object> property : properties()) {
			String description = (String) property.getOrDefault("description", "");
			assertThat(description).as((String) property.get("name"))
				.doesNotContain("{@")
				.doesNotContain("FAIL_")
				.doesNotContain("SERVICE_UNAVAILABLE")
				.doesNotContain("RECORD_AFTER_SUCCESS");
		}
		assertThat(property("idempotency.store.memory.max-bytes").get("description").toString())
			.contains("1/16 of the JVM's maximum heap");
		assertThat(property("idempotency.store.memory.max-share-per-scope")).containsEntry("defaultValue", 0.25)
			.containsEntry("type", "java.lang.Double");
		assertThat(property("idempotency.encryption.keys")).containsEntry("type",
				"java.util.Map<java.lang.String,java.lang.String>");
		assertThat(property("idempotency.encryption.keys").get("description").toString())
			.contains("openssl rand -base64 32");
		assertThat(property("idempotency.encryption.sealing-key-id")).containsEntry("type", "java.lang.String");
	}

	/**
	 * The properties hold their defaults as literals, which the configuration processor
	 * reads: bound as a user would write them, the defaults shown give the engine's
	 * defaults.
	 */
	@Test
	void theDefaultsShownAreTheEnginesDefaults() {
		List<String> engineProperties = List.of("idempotency.lifetime", "idempotency.grace", "idempotency.lease",
				"idempotency.heartbeat-interval", "idempotency.clock-skew", "idempotency.key-age-policy",
				"idempotency.mode", "idempotency.in-flight.wait", "idempotency.in-flight.poll-interval",
				"idempotency.in-flight.status", "idempotency.in-flight.retry-after", "idempotency.store.failure-mode",
				"idempotency.store.retry-after", "idempotency.response.max-body-size");
		Map<String, Object> shown = new LinkedHashMap<>();
		for (String name : engineProperties) {
			Object defaultValue = property(name).get("defaultValue");
			assertThat(defaultValue).as(name).isNotNull();
			shown.put(name, defaultValue);
		}
		IdempotencyProperties bound = new Binder(new MapConfigurationPropertySource(shown))
			.bind("idempotency", Bindable.ofInstance(new IdempotencyProperties()))
			.get();
		assertThat(IdempotencyAutoConfiguration.settings(bound)).isEqualTo(IdempotencySettings.defaults());
		assertThat(shown).containsEntry("idempotency.lease", "30s")
			.containsEntry("idempotency.response.max-body-size", "1MB");
	}

	/**
	 * Every property whose class gives it a default shows that default, and the default
	 * shown, bound as a user would write it, is the class's own: the metadata is
	 * generated from the fields, not copied by hand.
	 */
	@Test
	void everyDefaultInTheCodeIsShownAsItIs() throws ReflectiveOperationException {
		Map<String, Object> defaults = new LinkedHashMap<>();
		for (Class<?> type : List.of(IdempotencyProperties.class, IdempotencyMemoryStoreProperties.class,
				IdempotencyMethodProperties.class, IdempotencyObservationProperties.class,
				IdempotencyJdbcStoreProperties.class, IdempotencyRedisStoreProperties.class,
				IdempotencyR2dbcStoreProperties.class, IdempotencyClientProperties.class,
				IdempotencyEncryptionProperties.class)) {
			String prefix = type.getAnnotation(ConfigurationProperties.class).value();
			collectDefaults(type.getDeclaredConstructor().newInstance(), prefix, defaults);
		}
		assertThat(defaults).hasSizeGreaterThan(40)
			.containsKeys("idempotency.lease", "idempotency.store.memory.max-share-per-scope",
					"idempotency.store.jdbc.purge.interval", "idempotency.store.redis.replicas-ack-timeout",
					"idempotency.store.r2dbc.initialize-schema", "idempotency.encryption.require-sealed");
		Binder shown = new Binder(new MapConfigurationPropertySource(shownDefaults()));
		defaults.forEach((name, value) -> assertThat(shown.bind(name, Bindable.of(value.getClass())).orElse(null))
			.as(name + " shown as " + property(name).get("defaultValue"))
			.isEqualTo(value));
	}

	private static void collectDefaults(Object properties, String prefix, Map<String, Object> defaults)
			throws IllegalAccessException {
		for (Field field : properties.getClass().getDeclaredFields()) {
			if (Modifier.isStatic(field.getModifiers())) {
				continue;
			}
			field.setAccessible(true);
			Object value = field.get(properties);
			String name = prefix + "." + field.getName().replaceAll("([A-Z])", "-$1").toLowerCase(Locale.ROOT);
			if (value == null || value instanceof Collection<?> || value instanceof Map<?, ?>) {
				continue;
			}
			if (value.getClass().getName().startsWith("dev.idempotency.autoconfigure") && !value.getClass().isEnum()) {
				collectDefaults(value, name, defaults);
			}
			else {
				defaults.put(name, value);
			}
		}
	}

	private Map<String, Object> shownDefaults() {
		Map<String, Object> shown = new LinkedHashMap<>();
		for (Map<String, Object> property : properties()) {
			if (property.get("defaultValue") != null) {
				shown.put((String) property.get("name"), property.get("defaultValue"));
			}
		}
		return shown;
	}

	/**
	 * The client's key lifetime defaults to the server side's lifetime, and the metadata
	 * (generated from the field) shows that default.
	 */
	@Test
	void theClientKeyLifetimeDefaultIsTheServersLifetime() {
		Map<String, Object> keyLifetime = property("idempotency.client.key-lifetime");
		assertThat(keyLifetime.get("defaultValue")).isEqualTo("30m")
			.isEqualTo(property("idempotency.lifetime").get("defaultValue"));
		assertThat((String) keyLifetime.get("description")).contains("idempotency-key-lifetime");
	}

	/**
	 * The dedicated pool's settings are HikariCP's, bound under the store's prefix: each
	 * says what it does, and the defaults shown are the ones the pool gets (the starter's
	 * own 1 s connection timeout and 500 ms validation timeout, HikariCP's for the rest).
	 */
	@Test
	void everyDedicatedPoolPropertyIsDescribedWithTheDefaultThePoolGets() {
		List<Map<String, Object>> pool = properties().stream()
			.filter((property) -> ((String) property.get("name")).startsWith("idempotency.store.jdbc.pool."))
			.toList();
		assertThat(pool).hasSizeGreaterThanOrEqualTo(30);
		assertThat(pool)
			.allSatisfy((property) -> assertThat((String) property.get("description")).as((String) property.get("name"))
				.isNotBlank());
		assertThat(defaultOf("connection-timeout")).isEqualTo("1000");
		assertThat(defaultOf("validation-timeout")).isEqualTo("500");
		HikariConfig hikari = new HikariConfig();
		assertThat(defaultOf("maximum-pool-size")).isEqualTo(String.valueOf(hikari.getMaximumPoolSize()));
		assertThat(defaultOf("idle-timeout")).isEqualTo(String.valueOf(hikari.getIdleTimeout()));
		assertThat(defaultOf("max-lifetime")).isEqualTo(String.valueOf(hikari.getMaxLifetime()));
		assertThat(defaultOf("keepalive-time")).isEqualTo(String.valueOf(hikari.getKeepaliveTime()));
		assertThat(defaultOf("leak-detection-threshold")).isEqualTo(String.valueOf(hikari.getLeakDetectionThreshold()));
		assertThat(defaultOf("initialization-fail-timeout"))
			.isEqualTo(String.valueOf(hikari.getInitializationFailTimeout()));
		assertThat(defaultOf("auto-commit")).isEqualTo(String.valueOf(hikari.isAutoCommit()));
	}

	private String defaultOf(String poolProperty) {
		return String.valueOf(property("idempotency.store.jdbc.pool." + poolProperty).get("defaultValue"));
	}

	private List<String> hintValues(String name) {
		@SuppressWarnings("unchecked")
		List<Map<String, Object>> hints = (List<Map<String, Object>>) this.metadata.get("hints");
		return hints.stream()
			.filter((hint) -> hint.get("name").equals(name))
			.flatMap((hint) -> ((List<?>) hint.get("values")).stream())
			.map((value) -> (String) ((Map<?, ?>) value).get("value"))
			.collect(Collectors.toList());
	}

	private Map<String, Object> property(String name) {
		return properties().stream().filter((property) -> property.get("name").equals(name)).findFirst().orElseThrow();
	}

	@SuppressWarnings("unchecked")
	private List<Map<String, Object>> properties() {
		return (List<Map<String, Object>>) this.metadata.get("properties");
	}

	private static Map<String, Object> read() {
		try (InputStream in = IdempotencyConfigurationMetadataTests.class
			.getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
			return JsonParserFactory.getJsonParser().parseMap(new String(in.readAllBytes(), StandardCharsets.UTF_8));
		}
		catch (java.io.IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

}
