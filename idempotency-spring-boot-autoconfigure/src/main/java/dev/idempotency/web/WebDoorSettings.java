package dev.idempotency.web;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import dev.idempotency.autoconfigure.IdempotencyProperties;
import dev.idempotency.autoconfigure.internal.NeverStoredHeaders;
import dev.idempotency.core.KeyFormat;

import org.springframework.http.HttpHeaders;

/**
 * The WebFlux door's settings, read from the same {@code idempotency.*} properties as the
 * Spring MVC door's.
 *
 * @param storedHeaders the response headers stored besides {@code Content-Type}, as the
 * Spring MVC door stores them ({@link NeverStoredHeaders#storedWith})
 */
record WebDoorSettings(String headerName, List<String> pathPatterns, boolean pathPatternsKeyRequired,
		long maxRequestBytes, KeyFormat keyFormat, JsonFingerprint json, List<String> storedHeaders,
		String problemTypeBase) {

	static WebDoorSettings of(IdempotencyProperties properties) {
		return new WebDoorSettings(properties.getHeaderName(), properties.getWeb().getPathPatterns(),
				properties.getWeb().isPathPatternsKeyRequired(), properties.getRequest().getMaxBodySize().toBytes(),
				properties.getKey().getFormat().orElse(KeyFormat.UUID_V7), properties.getFingerprint().getJson(),
				NeverStoredHeaders.storedWith(properties.getResponse().getStoredHeaders()),
				properties.getWeb().getProblemTypeBase());
	}

	/** The headers of an answer that are stored with it. */
	Map<String, List<String>> storedHeaders(HttpHeaders headers) {
		Map<String, List<String>> stored = new LinkedHashMap<>();
		String contentType = headers.getFirst(HttpHeaders.CONTENT_TYPE);
		if (contentType != null) {
			stored.put("Content-Type", List.of(contentType));
		}
		for (String name : this.storedHeaders) {
			List<String> values = headers.get(name);
			if (values != null && !values.isEmpty()) {
				stored.put(name, List.copyOf(values));
			}
		}
		return stored;
	}

}
