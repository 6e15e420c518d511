package dev.idempotency.sample.catalog.idempotency;

import java.io.IOException;

import dev.idempotency.core.IdempotencyError;
import dev.idempotency.core.IdempotencyErrorType;
import dev.idempotency.sample.catalog.web.IcebergErrors;
import dev.idempotency.web.IdempotencyErrorRenderer;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

/**
 * Answers the starter's refusals in Iceberg's {@code ErrorResponse} shape instead of RFC
 * 9457, so that Iceberg clients read them like any other catalog error. The status is the
 * starter's (for a request still in flight the app configures 503, which Iceberg clients
 * retry).
 */
public class IcebergIdempotencyErrorRenderer implements IdempotencyErrorRenderer {

	@Override
	public void render(IdempotencyError error, HttpServletRequest request, HttpServletResponse response)
			throws IOException {
		IcebergErrors.write(response, error.status(), typeName(error.type()), error.detail());
	}

	/** The {@code type} of the error body, named like Iceberg's exception types. */
	static String typeName(IdempotencyErrorType type) {
		return switch (type) {
			case INVALID_KEY -> "InvalidIdempotencyKeyException";
			case KEY_REQUIRED -> "IdempotencyKeyRequiredException";
			case KEY_REUSED -> "IdempotencyKeyReusedException";
			case REQUEST_IN_FLIGHT -> "IdempotentRequestInFlightException";
			case REQUEST_TOO_LARGE -> "IdempotentRequestTooLargeException";
			case STORE_UNAVAILABLE -> "IdempotencyStoreUnavailableException";
			case INTEGRITY_CHECK_FAILED -> "IdempotentResponseIntegrityException";
		};
	}

}
