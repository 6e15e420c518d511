package dev.idempotency.web;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import dev.idempotency.autoconfigure.IdempotencyProperties;
import dev.idempotency.core.KeyFormat;

import org.springframework.http.HttpHeaders;

/**
 * The WebFlux door's settings, read from the same {@code idempotency.*} properties as the
 * Spring MVC door's.
 *
 * @param storedHeaders the response headers stored besides {@code Content-Type}
 */
record WebDoorSettings(String headerName, List<String> pathPatterns, boolean pathPatternsKeyRequired,
		long maxRequestBytes, KeyFormat keyFormat, JsonFingerprint json, List<String> storedHeaders,
		String problemTypeBase) {

	/** Stored whatever the configuration says, when present. */
	private static final List<String> DEFAULT_STORED_HEADERS = List.of("Location", "Content-Location", "ETag",
			"Last-Modified");

	/** Never stored: credentials and hop-by-hop headers. */
	private static final Set<String> NEVER_STORED = Set.of("set-cookie", "set-cookie2", "authorization",
			"proxy-authorization", "www-authenticate", "proxy-authenticate", "connection", "keep-alive",
			"transfer-encoding", "te", "trailer", "upgrade", "content-length", "idempotent-replayed");

	static WebDoorSettings of(IdempotencyProperties properties) {
		return new WebDoorSettings(properties.getHeaderName(), properties.getWeb().getPathPatterns(),
				properties.getWeb().isPathPatternsKeyRequired(), properties.getRequest().getMaxBodySize().toBytes(),
				properties.getKey().getFormat().orElse(KeyFormat.UUID_V7), properties.getFingerprint().getJson(),
				storedHeaderNames(properties.getResponse().getStoredHeaders()),
				properties.getWeb().getProblemTypeBase());
	}

	static List<String> storedHeaderNames(Collection<String> extra) {
		Set<String> names = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);
		names.addAll(DEFAULT_STORED_HEADERS);
		names.addAll(extra);
		names.removeIf((name) -> NEVER_STORED.contains(name.toLowerCase(Locale.ROOT)));
		return List.copyOf(names);
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
