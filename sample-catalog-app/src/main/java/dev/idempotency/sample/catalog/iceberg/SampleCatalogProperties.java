package dev.idempotency.sample.catalog.iceberg;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration of the sample catalog, under {@code catalog}.
 */
@ConfigurationProperties("catalog")
public class SampleCatalogProperties {

	/** Name of the catalog, used by Iceberg in metrics and table names. */
	private String name = "sample";

	/**
	 * Local directory that holds table and view metadata. Clients write data and manifest
	 * files under the table locations the server returns, so it must be a path both sides
	 * can reach.
	 */
	private Path warehouse = Path.of("data", "warehouse");

	/**
	 * Extra properties handed to Iceberg's JdbcCatalog (for example
	 * {@code jdbc.schema-version}).
	 */
	private Map<String, String> properties = new LinkedHashMap<>();

	private final Auth auth = new Auth();

	public String getName() {
		return this.name;
	}

	public void setName(String name) {
		this.name = name;
	}

	public Path getWarehouse() {
		return this.warehouse;
	}

	public void setWarehouse(Path warehouse) {
		this.warehouse = warehouse;
	}

	public Map<String, String> getProperties() {
		return this.properties;
	}

	public void setProperties(Map<String, String> properties) {
		this.properties = properties;
	}

	public Auth getAuth() {
		return this.auth;
	}

	/** Optional bearer-token authentication. */
	public static class Auth {

		/**
		 * Whether every request must carry a known bearer token: a catalog token on the
		 * catalog's routes, an operator token on the actuator's endpoints other than
		 * health.
		 */
		private boolean enabled = false;

		/**
		 * Accepted bearer tokens of the catalog's routes, each mapped to the principal it
		 * authenticates.
		 */
		private Map<String, String> tokens = new LinkedHashMap<>();

		/**
		 * Accepted bearer tokens of the actuator's endpoints other than health (the
		 * idempotency endpoint reads and removes any principal's keys), each mapped to
		 * the operator it authenticates. None: those endpoints are closed.
		 */
		private Map<String, String> operatorTokens = new LinkedHashMap<>();

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

		public Map<String, String> getTokens() {
			return this.tokens;
		}

		public void setTokens(Map<String, String> tokens) {
			this.tokens = tokens;
		}

		public Map<String, String> getOperatorTokens() {
			return this.operatorTokens;
		}

		public void setOperatorTokens(Map<String, String> operatorTokens) {
			this.operatorTokens = operatorTokens;
		}

	}

}
