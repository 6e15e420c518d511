package dev.idempotency.sample.catalog.planning;

import javax.sql.DataSource;

import dev.idempotency.sample.catalog.iceberg.CatalogTableRows;
import dev.idempotency.web.IdempotencyWebMvcAutoConfiguration;
import org.apache.iceberg.catalog.Catalog;

import org.springframework.boot.web.servlet.FilterRegistrationBean;
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
	ScanPlanning scanPlanning(Catalog catalog, CatalogTableRows tableRows, DataSource dataSource,
			PlatformTransactionManager transactionManager, ScanPlanSql sql, ScanPlanSchema schema,
			ScanPlanningProperties properties) {
		return new ScanPlanning(catalog, tableRows, new JdbcTemplate(dataSource), transactionManager, sql, properties);
	}

	/** Outside the Idempotency-Key filter: it sees the answer that filter sent. */
	@Bean
	FilterRegistrationBean<UnansweredPlanRelease> unansweredPlanRelease(ScanPlanning planning) {
		FilterRegistrationBean<UnansweredPlanRelease> registration = new FilterRegistrationBean<>(
				new UnansweredPlanRelease(planning));
		registration.addUrlPatterns("/v1/*");
		registration.setOrder(IdempotencyWebMvcAutoConfiguration.FILTER_ORDER - 1);
		return registration;
	}

}
