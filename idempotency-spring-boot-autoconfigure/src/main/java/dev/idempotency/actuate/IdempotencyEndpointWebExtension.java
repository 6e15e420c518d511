package dev.idempotency.actuate;

import dev.idempotency.IdempotencyRejectedException;
import org.jspecify.annotations.Nullable;

import org.springframework.aot.hint.annotation.RegisterReflectionForBinding;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.annotation.EndpointWebExtension;
import org.springframework.util.MimeType;

/**
 * The {@link IdempotencyEndpoint} over HTTP: {@code GET} answers 200 with the records or
 * 404 when none is live, {@code DELETE} 204 when it removed a record and 404 when there
 * was none; a bad request (a key its format refuses, an unknown format or door, a missing
 * scope, no door where both doors keep the key) is answered 400 with an
 * {@code application/problem+json} body that says why. A store that fails is answered by
 * {@link IdempotencyRejectedException}: 503 with {@code Retry-After}, as the doors answer
 * it.
 *
 * @since 0.1.0
 */
@EndpointWebExtension(endpoint = IdempotencyEndpoint.class)
@RegisterReflectionForBinding(IdempotencyEndpointWebExtension.Problem.class)
public class IdempotencyEndpointWebExtension {

	private static final MimeType PROBLEM_JSON = MimeType.valueOf("application/problem+json");

	private final IdempotencyEndpoint endpoint;

	public IdempotencyEndpointWebExtension(IdempotencyEndpoint endpoint) {
		this.endpoint = endpoint;
	}

	/** 200 with the records, 404 when none is live, 400 for a bad request. */
	@ReadOperation
	public WebEndpointResponse<?> records(String key, @Nullable String scope, @Nullable String format) {
		try {
			IdempotencyEndpoint.RecordsDescriptor records = this.endpoint.records(key, scope, format);
			return (records != null) ? new WebEndpointResponse<>(records)
					: new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND);
		}
		catch (InvalidEndpointRequestException ex) {
			return badRequest(ex);
		}
	}

	/** 204 when the record was removed, 404 when none was live, 400 for a bad request. */
	@DeleteOperation
	public WebEndpointResponse<?> remove(String key, @Nullable String scope, @Nullable String format,
			@Nullable String door, SecurityContext securityContext) {
		try {
			return new WebEndpointResponse<>(this.endpoint.remove(key, scope, format, door, securityContext)
					? WebEndpointResponse.STATUS_NO_CONTENT : WebEndpointResponse.STATUS_NOT_FOUND);
		}
		catch (InvalidEndpointRequestException ex) {
			return badRequest(ex);
		}
	}

	private static WebEndpointResponse<Problem> badRequest(InvalidEndpointRequestException ex) {
		String reason = ex.getReason();
		if (reason == null) {
			reason = String.valueOf(ex.getMessage());
		}
		return new WebEndpointResponse<>(new Problem("Bad Request", WebEndpointResponse.STATUS_BAD_REQUEST, reason),
				WebEndpointResponse.STATUS_BAD_REQUEST, PROBLEM_JSON);
	}

	/**
	 * An RFC 9457 problem of type {@code about:blank} (left out): the status's phrase,
	 * the status and why.
	 */
	record Problem(String title, int status, String detail) {

	}

}
