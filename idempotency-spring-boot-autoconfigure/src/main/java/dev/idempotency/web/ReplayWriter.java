package dev.idempotency.web;

import java.io.IOException;

import dev.idempotency.store.StoredResponse;
import jakarta.servlet.http.HttpServletResponse;

/**
 * Writes a stored response as the answer to a retry: its status, its stored headers,
 * {@value IdempotencyInterceptor#REPLAYED_HEADER}{@code : true} and its body.
 */
final class ReplayWriter {

	private ReplayWriter() {
	}

	static void write(StoredResponse stored, HttpServletResponse response) throws IOException {
		response.setStatus(stored.status());
		stored.headers().forEach((name, values) -> {
			if ("Content-Type".equalsIgnoreCase(name)) {
				response.setContentType(values.get(0));
			}
			else {
				values.forEach((value) -> response.addHeader(name, value));
			}
		});
		response.setHeader(IdempotencyInterceptor.REPLAYED_HEADER, "true");
		response.setContentLength(stored.body().length);
		if (stored.body().length > 0) {
			response.getOutputStream().write(stored.body());
		}
		response.flushBuffer();
	}

}
