package dev.idempotency.sample.catalog;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;

/**
 * An Apache Iceberg REST catalog whose mutations are made safe to retry by the
 * Idempotency-Key starter.
 */
@SpringBootApplication
@ConfigurationPropertiesScan
public class SampleCatalogApplication {

	public static void main(String[] args) {
		SpringApplication.run(SampleCatalogApplication.class, args);
	}

}
