package dev.idempotency.sample.catalog.web;

import org.apache.iceberg.catalog.Namespace;
import org.apache.iceberg.catalog.TableIdentifier;

/**
 * Turns the REST paths' variables into Iceberg identifiers. Namespace levels travel
 * joined by the unit separator ({@code %1F}); Spring has already percent-decoded path
 * variables and parameters.
 */
final class CatalogPaths {

	/** Every route exists with and without the optional {@code {prefix}} segment. */
	static final String V1 = "/v1";

	static final String V1_PREFIX = "/v1/{prefix}";

	private static final String UNIT_SEPARATOR = "\u001f";

	private CatalogPaths() {
	}

	static Namespace namespace(String decoded) {
		if (decoded == null || decoded.isEmpty()) {
			return Namespace.empty();
		}
		return Namespace.of(decoded.split(UNIT_SEPARATOR, -1));
	}

	static TableIdentifier identifier(String namespace, String name) {
		return TableIdentifier.of(namespace(namespace), name);
	}

}
