package dev.idempotency.sample.catalog.web;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** Spring MVC set-up of the REST API. */
@Configuration(proxyBeanMethods = false)
public class WebConfiguration {

	/**
	 * Boot puts converter beans ahead of its defaults: Iceberg's model is (de)serialized
	 * by Iceberg's rules.
	 */
	@Bean
	IcebergMessageConverter icebergMessageConverter() {
		return new IcebergMessageConverter();
	}

}
