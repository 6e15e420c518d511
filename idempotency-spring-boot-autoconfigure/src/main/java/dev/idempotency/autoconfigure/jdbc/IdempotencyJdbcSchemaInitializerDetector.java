package dev.idempotency.autoconfigure.jdbc;

import java.util.Set;

import org.springframework.boot.sql.init.dependency.AbstractBeansOfTypeDatabaseInitializerDetector;
import org.springframework.boot.sql.init.dependency.DatabaseInitializerDetector;
import org.springframework.util.ClassUtils;

/**
 * A {@link DatabaseInitializerDetector} for the starter's schema set-up: beans that
 * depend on database initialization (the store, an application's {@code JdbcTemplate}
 * users) wait for it.
 */
class IdempotencyJdbcSchemaInitializerDetector extends AbstractBeansOfTypeDatabaseInitializerDetector {

	@Override
	protected Set<Class<?>> getDatabaseInitializerBeanTypes() {
		// The initializer runs Liquibase: without it on the classpath there is no such
		// bean.
		if (!ClassUtils.isPresent("liquibase.integration.spring.SpringLiquibase", getClass().getClassLoader())) {
			return Set.of();
		}
		return Set.of(IdempotencyJdbcSchemaInitializer.class);
	}

}
