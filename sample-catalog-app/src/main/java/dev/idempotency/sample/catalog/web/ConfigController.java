package dev.idempotency.sample.catalog.web;

import java.util.List;

import dev.idempotency.autoconfigure.IdempotencyProperties;
import org.apache.iceberg.rest.Endpoint;
import org.apache.iceberg.rest.responses.ConfigResponse;

import org.springframework.http.MediaType;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code GET /v1/config}: the routes this server serves, and the Idempotency-Key lifetime
 * when the starter is on. Iceberg clients send the {@code Idempotency-Key} header only
 * when the lifetime is advertised, and assume a default set of routes (without views)
 * when {@code endpoints} is absent.
 */
@RestController
public class ConfigController {

	/**
	 * The spec's {@code unregisterTable}, which iceberg-core 1.12.0 has no constant for
	 * (its client does not call it).
	 */
	static final Endpoint V1_UNREGISTER_TABLE = Endpoint.create("POST",
			"/v1/{prefix}/namespaces/{namespace}/tables/{table}/unregister");

	/**
	 * Every route of the spec this server serves. Remote signing is left out; the
	 * credentials route answers an empty list.
	 */
	static final List<Endpoint> ENDPOINTS = List.of(Endpoint.V1_LIST_NAMESPACES, Endpoint.V1_LOAD_NAMESPACE,
			Endpoint.V1_NAMESPACE_EXISTS, Endpoint.V1_CREATE_NAMESPACE, Endpoint.V1_UPDATE_NAMESPACE,
			Endpoint.V1_DELETE_NAMESPACE, Endpoint.V1_COMMIT_TRANSACTION, Endpoint.V1_LIST_TABLES,
			Endpoint.V1_LOAD_TABLE, Endpoint.V1_TABLE_EXISTS, Endpoint.V1_CREATE_TABLE, Endpoint.V1_UPDATE_TABLE,
			Endpoint.V1_DELETE_TABLE, Endpoint.V1_RENAME_TABLE, Endpoint.V1_REGISTER_TABLE, V1_UNREGISTER_TABLE,
			Endpoint.V1_REPORT_METRICS, Endpoint.V1_TABLE_CREDENTIALS, Endpoint.V1_LIST_VIEWS, Endpoint.V1_LOAD_VIEW,
			Endpoint.V1_VIEW_EXISTS, Endpoint.V1_CREATE_VIEW, Endpoint.V1_UPDATE_VIEW, Endpoint.V1_DELETE_VIEW,
			Endpoint.V1_RENAME_VIEW, Endpoint.V1_REGISTER_VIEW, Endpoint.V1_SUBMIT_TABLE_SCAN_PLAN,
			Endpoint.V1_FETCH_TABLE_SCAN_PLAN, Endpoint.V1_CANCEL_TABLE_SCAN_PLAN,
			Endpoint.V1_FETCH_TABLE_SCAN_PLAN_TASKS);

	private final IdempotencyProperties idempotency;

	public ConfigController(IdempotencyProperties idempotency) {
		this.idempotency = idempotency;
	}

	@GetMapping(path = "/v1/config", produces = MediaType.APPLICATION_JSON_VALUE)
	public ConfigResponse config(@RequestParam(required = false) String warehouse) {
		// One catalog serves every warehouse name and prefix: nothing to override per
		// warehouse.
		ConfigResponse.Builder config = ConfigResponse.builder().withEndpoints(ENDPOINTS);
		if (this.idempotency.isEnabled()) {
			config.withIdempotencyKeyLifetime(this.idempotency.getLifetime().toString());
		}
		return config.build();
	}

}
