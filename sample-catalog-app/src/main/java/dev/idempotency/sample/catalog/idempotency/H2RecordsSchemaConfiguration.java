package dev.idempotency.sample.catalog.idempotency;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.ResultSet;
import java.sql.SQLException;

import javax.sql.DataSource;

import dev.idempotency.autoconfigure.jdbc.IdempotencyJdbcDataSource;
import dev.idempotency.autoconfigure.jdbc.IdempotencyJdbcSchemaInitializer;
import dev.idempotency.autoconfigure.jdbc.IdempotencyJdbcStoreProperties;

import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Lets the embedded default start a second time on its H2 file. The catalog's H2 database
 * is opened with {@code DATABASE_TO_LOWER=TRUE} (Iceberg's {@code JdbcCatalog} reopens a
 * catalog with views only so), which stores the starter's Liquibase changelog table as
 * {@code idempotency_databasechangelog}; Liquibase 4.33 looks for it as
 * {@code IDEMPOTENCY_DATABASECHANGELOG}, does not find it, and fails creating it again.
 * On H2, the starter's schema initializer therefore runs only while the records table is
 * missing from the connection's schema; on other databases it runs as the starter
 * configures it.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnBooleanProperty(name = "idempotency.enabled", matchIfMissing = true)
@ConditionalOnProperty(prefix = "idempotency.store", name = "type", havingValue = "jdbc")
class H2RecordsSchemaConfiguration {

	@Bean
	IdempotencyJdbcSchemaInitializer idempotencyJdbcSchemaInitializer(IdempotencyJdbcDataSource storeDataSource,
			IdempotencyJdbcStoreProperties properties) {
		DataSource dataSource = storeDataSource.getDataSource();
		String table = properties.getTableName();
		return new IdempotencyJdbcSchemaInitializer(dataSource, table, properties.getInitializeSchema()) {

			@Override
			public boolean initializeSchema() throws Exception {
				if (isH2WithTable(dataSource, table)) {
					return false;
				}
				return super.initializeSchema();
			}

		};
	}

	private static boolean isH2WithTable(DataSource dataSource, String table) throws SQLException {
		try (Connection connection = dataSource.getConnection()) {
			DatabaseMetaData metaData = connection.getMetaData();
			if (!"H2".equals(metaData.getDatabaseProductName())) {
				return false;
			}
			for (String name : new String[] { table, table.toUpperCase(java.util.Locale.ROOT) }) {
				try (ResultSet tables = metaData.getTables(connection.getCatalog(), connection.getSchema(), name,
						new String[] { "TABLE" })) {
					if (tables.next()) {
						return true;
					}
				}
			}
			return false;
		}
	}

}
