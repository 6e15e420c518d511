package dev.idempotency.engine;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;

import org.jspecify.annotations.Nullable;

/**
 * SHA-256 fingerprints of requests, so that a key reused with another request is
 * recognised. Fields are length-prefixed, so no two different requests share an input.
 */
public final class Fingerprints {

	private Fingerprints() {
	}

	/**
	 * Fingerprint of an HTTP request: method, path, query parameters sorted by name (so
	 * the order of different names does not matter, while the order of one name's values
	 * does), the media type the body is sent as (normalised by the caller) and the body.
	 * @param mediaType the body's media type in normal form, empty when none was sent
	 * @param body the body's bytes, or a normal form of them
	 */
	public static String http(String method, String path, @Nullable String query, String mediaType, byte[] body) {
		MessageDigest digest = sha256();
		// Five fields where the earlier format had four: no input of one format is an
		// input of the other.
		update(digest, method.getBytes(StandardCharsets.UTF_8));
		update(digest, path.getBytes(StandardCharsets.UTF_8));
		update(digest, sortedQuery(query).getBytes(StandardCharsets.UTF_8));
		update(digest, mediaType.getBytes(StandardCharsets.UTF_8));
		update(digest, body);
		return HexFormat.of().formatHex(digest.digest());
	}

	/**
	 * Fingerprint of an HTTP request in the earlier format, without the media type:
	 * method, path, sorted query and body. Records made before the media type was part of
	 * the fingerprint hold it, so a retry of the same request is still recognised.
	 */
	public static String httpWithoutMediaType(String method, String path, @Nullable String query, byte[] body) {
		MessageDigest digest = sha256();
		update(digest, method.getBytes(StandardCharsets.UTF_8));
		update(digest, path.getBytes(StandardCharsets.UTF_8));
		update(digest, sortedQuery(query).getBytes(StandardCharsets.UTF_8));
		update(digest, body);
		return HexFormat.of().formatHex(digest.digest());
	}

	/**
	 * Fingerprint of a method call: the method's identity and its serialized arguments.
	 */
	public static String method(String methodIdentity, byte[] serializedArguments) {
		MessageDigest digest = sha256();
		update(digest, methodIdentity.getBytes(StandardCharsets.UTF_8));
		update(digest, serializedArguments);
		return HexFormat.of().formatHex(digest.digest());
	}

	/** Hex SHA-256 of a string, for scopes too long to store and for logs. */
	public static String sha256Hex(String text) {
		return HexFormat.of().formatHex(sha256().digest(text.getBytes(StandardCharsets.UTF_8)));
	}

	static String sortedQuery(@Nullable String query) {
		if (query == null || query.isEmpty()) {
			return "";
		}
		List<String> pairs = new ArrayList<>(List.of(query.split("&")));
		pairs.removeIf(String::isEmpty);
		// A stable sort by name only: the values of one name keep the order they were
		// sent in.
		pairs.sort(Comparator.comparing(Fingerprints::parameterName));
		return String.join("&", pairs);
	}

	private static String parameterName(String pair) {
		int equals = pair.indexOf('=');
		return (equals >= 0) ? pair.substring(0, equals) : pair;
	}

	private static void update(MessageDigest digest, byte[] field) {
		int length = field.length;
		digest.update(
				new byte[] { (byte) (length >>> 24), (byte) (length >>> 16), (byte) (length >>> 8), (byte) length });
		digest.update(field);
	}

	private static MessageDigest sha256() {
		try {
			return MessageDigest.getInstance("SHA-256");
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is required of every Java platform", ex);
		}
	}

}
