package dev.idempotency.actuate;

import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.EndpointWebExtension;

/**
 * The {@link IdempotencyEndpoint} over HTTP: {@code DELETE} answers 204 when it removed a
 * record and 404 when there was none ({@code GET} answers 200 or 404 as the endpoint
 * does).
 *
 * @since 0.1.0
 */
@EndpointWebExtension(endpoint = IdempotencyEndpoint.class)
public class IdempotencyEndpointWebExtension {

	private final IdempotencyEndpoint endpoint;

	public IdempotencyEndpointWebExtension(IdempotencyEndpoint endpoint) {
		this.endpoint = endpoint;
	}

	/** 204 when the record was removed, 404 when none was live. */
	@DeleteOperation
	public WebEndpointResponse<Void> remove(String key, @Nullable String scope, SecurityContext securityContext) {
		return new WebEndpointResponse<>(this.endpoint.remove(key, scope, securityContext)
				? WebEndpointResponse.STATUS_NO_CONTENT : WebEndpointResponse.STATUS_NOT_FOUND);
	}

}
