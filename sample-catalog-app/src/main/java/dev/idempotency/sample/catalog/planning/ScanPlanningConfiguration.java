package dev.idempotency.sample.catalog.planning;

import javax.sql.DataSource;

import org.apache.iceberg.catalog.Catalog;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.PlatformTransactionManager;

/** Server-side scan planning on the catalog's database. */
@Configuration(proxyBeanMethods = false)
public class ScanPlanningConfiguration {

	@Bean
	ScanPlanSql scanPlanSql(DataSource dataSource) {
		return ScanPlanSql.forDataSource(dataSource);
	}

	@Bean
	ScanPlanSchema scanPlanSchema(DataSource dataSource, ScanPlanSql sql) {
		return new ScanPlanSchema(new JdbcTemplate(dataSource), sql);
	}

	@Bean
	ScanPlanning scanPlanning(Catalog catalog, DataSource dataSource, PlatformTransactionManager transactionManager,
			ScanPlanSql sql, ScanPlanSchema schema, ScanPlanningProperties properties) {
		return new ScanPlanning(catalog, new JdbcTemplate(dataSource), transactionManager, sql, properties);
	}

}
