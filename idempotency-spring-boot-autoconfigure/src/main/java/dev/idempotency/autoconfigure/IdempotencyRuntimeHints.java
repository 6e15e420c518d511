package dev.idempotency.autoconfigure;

import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;

/**
 * What the starter reads from its own jar at run time, for a GraalVM native image: the
 * JDBC store's Liquibase changelog and the Redis store's Lua scripts. Registered in
 * {@code META-INF/spring/aot.factories}, so both are included whichever store the
 * application was built with. The configuration properties need nothing here: Spring Boot
 * registers the binding of every {@code @ConfigurationProperties} bean itself, and the
 * failure analyzers, initializers and detectors of {@code META-INF/spring.factories} are
 * registered by Spring Framework.
 */
final class IdempotencyRuntimeHints implements RuntimeHintsRegistrar {

	/**
	 * The JDBC store's changelog ({@code IdempotencyJdbcSchemaInitializer.CHANGELOG}).
	 */
	static final String CHANGELOG = "db/idempotency/changelog-master.yaml";

	/** The Redis store's scripts ({@code RedisScripts.LOCATION}). */
	static final String REDIS_SCRIPTS = "dev/idempotency/store/redis/idempotency-scripts.lua";

	@Override
	public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
		hints.resources().registerPattern(CHANGELOG).registerPattern(REDIS_SCRIPTS);
	}

}
