package dev.idempotency.sample.catalog.web;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

import jakarta.servlet.http.HttpServletResponse;
import org.apache.iceberg.rest.responses.ErrorResponse;
import org.apache.iceberg.rest.responses.ErrorResponseParser;

import org.springframework.http.MediaType;

/** Iceberg's error body, {@code {"error":{"message","type","code"}}}. */
public final class IcebergErrors {

	private IcebergErrors() {
	}

	public static ErrorResponse of(int status, String type, String message) {
		return ErrorResponse.builder().responseCode(status).withType(type).withMessage(message).build();
	}

	/**
	 * Writes an error straight to the servlet response, for code that runs outside Spring
	 * MVC's handlers.
	 */
	public static void write(HttpServletResponse response, int status, String type, String message) throws IOException {
		response.setStatus(status);
		response.setContentType(MediaType.APPLICATION_JSON_VALUE);
		byte[] body = ErrorResponseParser.toJson(of(status, type, message)).getBytes(StandardCharsets.UTF_8);
		response.setContentLength(body.length);
		response.getOutputStream().write(body);
	}

}
