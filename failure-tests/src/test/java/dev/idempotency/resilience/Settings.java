package dev.idempotency.resilience;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The settings every node of these tests shares, whatever its store. */
final class Settings {

	/** The lease: a crashed owner blocks its key for about this long. */
	static final String LEASE = "3s";

	/** Largest stored body: small, so a test can exceed it cheaply. */
	static final int MAX_BODY_BYTES = 8 * 1024;

	private Settings() {
	}

	static Map<String, String> common() {
		Map<String, String> properties = new LinkedHashMap<>();
		properties.put("idempotency.lease", LEASE);
		properties.put("idempotency.heartbeat-interval", "1s");
		// The store's timeout must fit in the lease with the interval, a sweep and a
		// pause: 1 s + 1 s + 0.25 s + 0.5 s < 3 s.
		properties.put("idempotency.store.jdbc.query-timeout", "1s");
		properties.put("idempotency.store.redis.command-timeout", "1s");
		properties.put("idempotency.in-flight.wait", "300ms");
		properties.put("idempotency.response.max-body-size", MAX_BODY_BYTES + "B");
		// A header of the application's own is replayed; credentials are never stored,
		// and asking for them fails the start.
		properties.put("idempotency.response.stored-headers", "X-Trace");
		properties.put("logging.level.dev.idempotency.core", "DEBUG");
		properties.put("spring.main.banner-mode", "off");
		properties.put("spring.jmx.enabled", "false");
		return properties;
	}

	/** Common settings, then the given ones on top. */
	static Map<String, String> with(Map<String, String> overrides) {
		Map<String, String> properties = common();
		properties.putAll(overrides);
		return properties;
	}

	static List<String> arguments(Map<String, String> properties) {
		return properties.entrySet().stream().map((entry) -> "--" + entry.getKey() + "=" + entry.getValue()).toList();
	}

}
