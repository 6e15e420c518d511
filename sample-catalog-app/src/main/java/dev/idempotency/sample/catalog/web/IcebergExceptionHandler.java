package dev.idempotency.sample.catalog.web;

import java.util.Map;

import org.apache.iceberg.exceptions.AlreadyExistsException;
import org.apache.iceberg.exceptions.CommitFailedException;
import org.apache.iceberg.exceptions.CommitStateUnknownException;
import org.apache.iceberg.exceptions.ForbiddenException;
import org.apache.iceberg.exceptions.NamespaceNotEmptyException;
import org.apache.iceberg.exceptions.NoSuchIcebergTableException;
import org.apache.iceberg.exceptions.NoSuchNamespaceException;
import org.apache.iceberg.exceptions.NoSuchPlanIdException;
import org.apache.iceberg.exceptions.NoSuchPlanTaskException;
import org.apache.iceberg.exceptions.NoSuchTableException;
import org.apache.iceberg.exceptions.NoSuchViewException;
import org.apache.iceberg.exceptions.NotAuthorizedException;
import org.apache.iceberg.exceptions.NotFoundException;
import org.apache.iceberg.exceptions.ServiceUnavailableException;
import org.apache.iceberg.exceptions.UnprocessableEntityException;
import org.apache.iceberg.exceptions.ValidationException;
import org.apache.iceberg.rest.responses.ErrorResponse;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.TypeMismatchException;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ResponseEntity;
import org.springframework.http.converter.HttpMessageNotReadableException;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

/**
 * Answers every failure in Iceberg's {@code ErrorResponse} shape, with the status
 * Iceberg's reference server uses for the exception's exact class and {@code type} = its
 * simple class name: the Iceberg client tells a missing namespace from a missing table by
 * that type.
 */
@RestControllerAdvice
public class IcebergExceptionHandler {

	private static final Logger logger = LoggerFactory.getLogger(IcebergExceptionHandler.class);

	private static final String BAD_REQUEST = "BadRequestException";

	/** Looked up by exact class: a subclass is not assumed to mean the same thing. */
	private static final Map<Class<? extends Exception>, Integer> STATUS_BY_EXCEPTION = Map.ofEntries(
			Map.entry(IllegalArgumentException.class, 400), Map.entry(ValidationException.class, 400),
			Map.entry(NotAuthorizedException.class, 401), Map.entry(ForbiddenException.class, 403),
			Map.entry(NoSuchNamespaceException.class, 404), Map.entry(NoSuchTableException.class, 404),
			Map.entry(NoSuchViewException.class, 404), Map.entry(NotFoundException.class, 404),
			Map.entry(NoSuchIcebergTableException.class, 404), Map.entry(NoSuchPlanIdException.class, 404),
			Map.entry(NoSuchPlanTaskException.class, 404), Map.entry(UnsupportedOperationException.class, 406),
			Map.entry(AlreadyExistsException.class, 409), Map.entry(NamespaceNotEmptyException.class, 409),
			Map.entry(CommitFailedException.class, 409), Map.entry(UnprocessableEntityException.class, 422),
			Map.entry(CommitStateUnknownException.class, 500), Map.entry(ServiceUnavailableException.class, 503));

	/** Seconds a client should wait before it retries a 503 (a full plan table). */
	private static final String RETRY_AFTER_SECONDS = "1";

	@ExceptionHandler(HttpMessageNotReadableException.class)
	ResponseEntity<ErrorResponse> unreadable(HttpMessageNotReadableException ex) {
		return respond(400, BAD_REQUEST, "Malformed request body: " + ex.getMostSpecificCause().getMessage());
	}

	@ExceptionHandler(Exception.class)
	ResponseEntity<ErrorResponse> catalog(Exception ex) {
		// Spring MVC's own failures (unknown route, wrong method, missing parameter) keep
		// their status.
		if (ex instanceof org.springframework.web.ErrorResponse springError) {
			HttpStatusCode status = springError.getStatusCode();
			String detail = springError.getBody().getDetail();
			return respond(status.value(), (status.value() == 400) ? BAD_REQUEST : ex.getClass().getSimpleName(),
					(detail != null) ? detail : ex.getMessage());
		}
		if (ex instanceof TypeMismatchException) {
			return respond(400, BAD_REQUEST, ex.getMessage());
		}
		int status = STATUS_BY_EXCEPTION.getOrDefault(ex.getClass(), 500);
		if (status == 500) {
			logger.error("Request failed", ex);
		}
		ResponseEntity<ErrorResponse> response = respond(status, ex.getClass().getSimpleName(), ex.getMessage());
		if (status == 503) {
			return ResponseEntity.status(status)
				.header(HttpHeaders.RETRY_AFTER, RETRY_AFTER_SECONDS)
				.body(response.getBody());
		}
		return response;
	}

	private static ResponseEntity<ErrorResponse> respond(int status, String type, @Nullable String message) {
		return ResponseEntity.status(status).body(IcebergErrors.of(status, type, (message != null) ? message : type));
	}

}
