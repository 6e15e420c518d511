package dev.idempotency.sample.catalog.iceberg;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.LinkedHashMap;
import java.util.Map;

import javax.sql.DataSource;

import org.apache.iceberg.CatalogProperties;
import org.apache.iceberg.jdbc.JdbcCatalog;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.ResourceTransactionManager;

/**
 * The Iceberg catalog behind the REST API: a {@link JdbcCatalog} on the application's
 * {@link DataSource}, with metadata files in a local warehouse directory. Its statements
 * join a Spring transaction that is active on that {@code DataSource}
 * ({@link DataSourceJdbcClientPool}); multi-table commits run in one, on the
 * application's transaction manager (Boot's, for the one {@code DataSource}).
 */
@Configuration(proxyBeanMethods = false)
public class IcebergCatalogConfiguration {

	@Bean(destroyMethod = "close")
	JdbcCatalog icebergCatalog(DataSource dataSource, SampleCatalogProperties properties) throws IOException {
		Path warehouse = properties.getWarehouse().toAbsolutePath().normalize();
		Files.createDirectories(warehouse);
		Map<String, String> catalogProperties = new LinkedHashMap<>();
		// V1 adds views to the JDBC catalog's schema; a later properties entry can still
		// override it.
		catalogProperties.put("jdbc.schema-version", "V1");
		catalogProperties.putAll(properties.getProperties());
		catalogProperties.put(CatalogProperties.URI, jdbcUrl(dataSource));
		catalogProperties.put(CatalogProperties.WAREHOUSE_LOCATION, warehouse.toString());
		catalogProperties.put(CatalogProperties.FILE_IO_IMPL, LocalFileIO.class.getName());

		JdbcCatalog catalog = new JdbcCatalog(ioProperties -> {
			LocalFileIO io = new LocalFileIO();
			io.initialize(ioProperties);
			return io;
		}, poolProperties -> new DataSourceJdbcClientPool(dataSource, poolProperties.get(CatalogProperties.URI),
				poolProperties), true);
		catalog.initialize(properties.getName(), catalogProperties);
		return catalog;
	}

	@Bean
	CatalogTransactions catalogTransactions(JdbcCatalog catalog, DataSource dataSource,
			PlatformTransactionManager transactionManager) {
		if (transactionManager instanceof ResourceTransactionManager resources
				&& resources.getResourceFactory() != dataSource) {
			throw new IllegalStateException("The transaction manager " + transactionManager.getClass().getName()
					+ " manages " + resources.getResourceFactory() + ", not the catalog's DataSource " + dataSource
					+ ": multi-table commits would not be atomic. Define the transaction manager on the catalog's"
					+ " DataSource");
		}
		return new CatalogTransactions(catalog, transactionManager);
	}

	@Bean
	CatalogTableRows catalogTableRows(JdbcCatalog catalog, DataSource dataSource,
			PlatformTransactionManager transactionManager) {
		return new CatalogTableRows(catalog, dataSource, transactionManager);
	}

	private static String jdbcUrl(DataSource dataSource) {
		try (Connection connection = dataSource.getConnection()) {
			return connection.getMetaData().getURL();
		}
		catch (SQLException ex) {
			throw new IllegalStateException("Cannot reach the catalog database", ex);
		}
	}

}
