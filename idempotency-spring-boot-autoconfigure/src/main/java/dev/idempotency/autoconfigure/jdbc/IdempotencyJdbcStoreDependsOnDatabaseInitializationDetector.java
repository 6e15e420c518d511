package dev.idempotency.autoconfigure.jdbc;

import java.util.Set;

import dev.idempotency.store.jdbc.JdbcIdempotencyStore;

import org.springframework.boot.sql.init.dependency.AbstractBeansOfTypeDependsOnDatabaseInitializationDetector;
import org.springframework.boot.sql.init.dependency.DependsOnDatabaseInitializationDetector;

/**
 * A {@link DependsOnDatabaseInitializationDetector} for the JDBC idempotency store: Boot
 * creates it after every database initializer (the application's Liquibase or Flyway, SQL
 * scripts, and the starter's own schema set-up), so its table check sees the schema they
 * make.
 */
class IdempotencyJdbcStoreDependsOnDatabaseInitializationDetector
		extends AbstractBeansOfTypeDependsOnDatabaseInitializationDetector {

	@Override
	protected Set<Class<?>> getDependsOnDatabaseInitializationBeanTypes() {
		return Set.of(JdbcIdempotencyStore.class);
	}

}
