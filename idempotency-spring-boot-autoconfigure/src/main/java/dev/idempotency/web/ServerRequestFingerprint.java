package dev.idempotency.web;

import java.util.List;

import dev.idempotency.core.internal.Fingerprints;

import org.jspecify.annotations.Nullable;
import org.springframework.http.server.reactive.ServerHttpRequest;

/**
 * The {@link HttpRequestFingerprint} of a WebFlux request, from the same parts (method,
 * path and query as sent, the normalised media type, the body read by the door), so that
 * the same request has the same fingerprint on both stacks.
 */
final class ServerRequestFingerprint {

	private final String method;

	private final String path;

	private final @Nullable String query;

	private final String mediaType;

	private final byte[] body;

	private final byte[] fingerprintedBody;

	ServerRequestFingerprint(ServerHttpRequest request, byte[] body, JsonFingerprint json) {
		this.method = request.getMethod().name();
		this.path = request.getURI().getRawPath();
		this.query = request.getURI().getRawQuery();
		this.mediaType = HttpRequestFingerprint.normalisedMediaType(request.getHeaders().getFirst("Content-Type"));
		this.body = body;
		byte[] canonical = (json == JsonFingerprint.CANONICAL && HttpRequestFingerprint.isJson(essence(this.mediaType)))
				? CanonicalJson.of(body) : null;
		this.fingerprintedBody = (canonical != null) ? canonical : body;
	}

	String fingerprint() {
		return Fingerprints.http(this.method, this.path, this.query, this.mediaType, this.fingerprintedBody);
	}

	/** As {@link HttpRequestFingerprint#earlierFingerprints()}. */
	List<String> earlierFingerprints() {
		String withoutMediaType = Fingerprints.httpWithoutMediaType(this.method, this.path, this.query, this.body);
		if (this.fingerprintedBody == this.body) {
			return List.of(withoutMediaType);
		}
		return List.of(withoutMediaType,
				Fingerprints.http(this.method, this.path, this.query, this.mediaType, this.body));
	}

	private static String essence(String mediaType) {
		int semicolon = mediaType.indexOf(';');
		return (semicolon >= 0) ? mediaType.substring(0, semicolon) : mediaType;
	}

}
