package dev.idempotency.sample.catalog.web;

import org.apache.iceberg.TableMetadata;
import org.apache.iceberg.rest.RESTResponse;

/**
 * The spec's {@code UnregisterTableResult}: {@code {"metadata-location": ..., "metadata":
 * {...}}}, the table's last metadata file and its content. Iceberg 1.12.0 has no class
 * for it; {@link IcebergMessageConverter} writes it with Iceberg's mapper (kebab-case
 * fields, Iceberg's serializer for the metadata).
 */
public final class UnregisterTableResponse implements RESTResponse {

	private final String metadataLocation;

	private final TableMetadata metadata;

	UnregisterTableResponse(TableMetadata metadata) {
		this.metadataLocation = metadata.metadataFileLocation();
		this.metadata = metadata;
	}

	public String metadataLocation() {
		return this.metadataLocation;
	}

	public TableMetadata metadata() {
		return this.metadata;
	}

	@Override
	public void validate() {
		// Built from metadata read from its file: both fields are present.
	}

}
