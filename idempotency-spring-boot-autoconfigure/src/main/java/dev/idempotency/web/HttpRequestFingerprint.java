package dev.idempotency.web;

import java.nio.charset.Charset;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

import dev.idempotency.core.internal.Fingerprints;
import org.jspecify.annotations.Nullable;
import org.springframework.util.InvalidMimeTypeException;
import org.springframework.util.MimeType;
import org.springframework.util.MimeTypeUtils;

/**
 * What makes two keyed HTTP requests the same request: method, path, the query's
 * parameters as the application receives them (decoded, sorted by name), the media type
 * the body is sent as (normalised) and the body. Reads the body on the first call only
 * (after the key was found valid and the handler protected), and once. The same for both
 * stacks, and free of either stack's API: a servlet request's body is read by
 * {@link ServletRequestBodies}, a WebFlux request's by its door before.
 */
final class HttpRequestFingerprint {

	private final String method;

	private final String path;

	private final @Nullable String query;

	private final @Nullable String contentType;

	private final Supplier<byte[]> bodyReader;

	private final JsonFingerprint json;

	private @Nullable String mediaType;

	/**
	 * How many media types as sent (of at most 128 characters) are kept in their normal
	 * form: an application sees a few; past this many (a client sending a new boundary
	 * each time) they are normalised on every request.
	 */
	private static final int NORMALISED_KEPT = 256;

	/** Media types as sent, in their normal form ({@link #normalisedMediaType}). */
	private static final Map<String, String> NORMALISED = new ConcurrentHashMap<>();

	private byte @Nullable [] body;

	private byte @Nullable [] fingerprintedBody;

	/**
	 * @param path the path as sent (not decoded)
	 * @param query the query as sent, {@code null} for none
	 * @param bodyReader reads what of the body is fingerprinted, once, when first needed
	 */
	HttpRequestFingerprint(String method, String path, @Nullable String query, @Nullable String contentType,
			Supplier<byte[]> bodyReader, JsonFingerprint json) {
		this.method = method;
		this.path = path;
		this.query = query;
		this.contentType = contentType;
		this.bodyReader = bodyReader;
		this.json = json;
	}

	/** The request's fingerprint. */
	String fingerprint() {
		return Fingerprints.http(this.method, this.path, this.query, mediaType(), fingerprintedBody());
	}

	/**
	 * The fingerprints the same request had under earlier formats or the other JSON
	 * setting: without its media type (before the media type was part of the
	 * fingerprint), with canonical JSON over the bytes as sent (before the setting was
	 * switched on), and with its query compared as sent (before it was compared decoded).
	 * The formats that compared the query as sent only where they tell this request apart
	 * from every other ({@link Fingerprints#queryAsSentIsUnambiguous}):
	 * {@code ?a=1&%61=2} and {@code ?%61=2&a=1} had one fingerprint there.
	 */
	List<String> earlierFingerprints() {
		String method = this.method;
		String path = this.path;
		String query = this.query;
		Set<String> earlier = new LinkedHashSet<>();
		boolean queryAsSent = Fingerprints.queryAsSentIsUnambiguous(query);
		if (queryAsSent) {
			earlier.add(Fingerprints.httpWithoutMediaType(method, path, query, body()));
		}
		earlier.add(Fingerprints.http(method, path, query, mediaType(), body()));
		if (queryAsSent) {
			earlier.add(Fingerprints.httpWithQueryAsSent(method, path, query, mediaType(), fingerprintedBody()));
			earlier.add(Fingerprints.httpWithQueryAsSent(method, path, query, mediaType(), body()));
		}
		// Where the query has no escapes (the fingerprint did not change) and the body is
		// fingerprinted as sent, these repeat the fingerprint itself.
		earlier.remove(fingerprint());
		return List.copyOf(earlier);
	}

	/**
	 * The body as fingerprinted: with canonical JSON, a JSON body's canonical form; else
	 * (and for a JSON body that does not parse) the body itself.
	 */
	private byte[] fingerprintedBody() {
		if (this.fingerprintedBody == null) {
			byte[] canonical = null;
			if (this.json == JsonFingerprint.CANONICAL && isJson(essence(mediaType()))) {
				canonical = CanonicalJson.of(body());
			}
			this.fingerprintedBody = (canonical != null) ? canonical : body();
		}
		return this.fingerprintedBody;
	}

	private static String essence(String mediaType) {
		int semicolon = mediaType.indexOf(';');
		return (semicolon >= 0) ? mediaType.substring(0, semicolon) : mediaType;
	}

	private String mediaType() {
		if (this.mediaType == null) {
			this.mediaType = normalisedMediaType(this.contentType);
		}
		return this.mediaType;
	}

	/**
	 * The media type in normal form: type and subtype in lower case, and the charset, by
	 * its canonical name in lower case, as the only parameter. A JSON body without a
	 * charset is UTF-8 (RFC 8259), so for {@code application/json} and {@code +json}
	 * types a missing charset is {@code utf-8}; for other types it stays missing. Other
	 * parameters (a multipart boundary, which changes with every retry) do not count. A
	 * value that does not parse is kept, stripped and in lower case.
	 */
	static String normalisedMediaType(@Nullable String contentType) {
		if (contentType == null || contentType.isBlank()) {
			return "";
		}
		String known = NORMALISED.get(contentType);
		if (known != null) {
			return known;
		}
		String normalised = normalise(contentType);
		if (contentType.length() <= 128 && NORMALISED.size() < NORMALISED_KEPT) {
			NORMALISED.put(contentType, normalised);
		}
		return normalised;
	}

	private static String normalise(String contentType) {
		MimeType type;
		try {
			type = MimeTypeUtils.parseMimeType(contentType);
		}
		catch (InvalidMimeTypeException ex) {
			return contentType.strip().toLowerCase(Locale.ROOT);
		}
		String essence = type.getType().toLowerCase(Locale.ROOT) + "/" + type.getSubtype().toLowerCase(Locale.ROOT);
		String charset = charset(type);
		if (charset == null && isJson(essence)) {
			charset = "utf-8";
		}
		return (charset != null) ? essence + ";charset=" + charset : essence;
	}

	static boolean isJson(String essence) {
		return essence.equals("application/json") || essence.endsWith("+json");
	}

	private static @Nullable String charset(MimeType type) {
		String value = type.getParameter("charset");
		if (value == null) {
			return null;
		}
		String unquoted = (value.length() >= 2 && value.startsWith("\"") && value.endsWith("\""))
				? value.substring(1, value.length() - 1) : value;
		try {
			return Charset.forName(unquoted).name().toLowerCase(Locale.ROOT);
		}
		catch (IllegalArgumentException ex) {
			// Unknown to this JVM: compared as sent, in lower case.
			return unquoted.strip().toLowerCase(Locale.ROOT);
		}
	}

	private byte[] body() {
		if (this.body == null) {
			this.body = this.bodyReader.get();
		}
		return this.body;
	}

}
