package dev.idempotency.core.internal;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;

import org.jspecify.annotations.Nullable;

/**
 * SHA-256 fingerprints of requests, so that a key reused with another request is
 * recognised. Fields are length-prefixed, so no two different requests share an input.
 *
 * @since 0.1.0
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

	/**
	 * The body of a form post as fingerprinted: the parameters sorted by name, each with
	 * its values in the order they were sent, as length-prefixed fields.
	 */
	public static byte[] formBody(Map<String, String[]> parameters) {
		ByteArrayOutputStream out = new ByteArrayOutputStream();
		new TreeMap<>(parameters).forEach((name, values) -> {
			field(out, utf8(name));
			field(out, lengthPrefix(values.length));
			for (String value : values) {
				field(out, utf8(value));
			}
		});
		return out.toByteArray();
	}

	/**
	 * The body of a multipart request as fingerprinted, part after part: each part's
	 * name, its headers (by lower-case name, sorted; each name's values joined with
	 * commas) and its bytes, as length-prefixed fields. The boundary does not count.
	 */
	public static final class MultipartBody {

		private final ByteArrayOutputStream out = new ByteArrayOutputStream();

		/**
		 * Adds the next part.
		 * @param headerValues the values of a header, by its lower-case name
		 */
		public void part(String name, Collection<String> headerNames, Function<String, Collection<String>> headerValues,
				byte[] content) {
			field(this.out, utf8(name));
			List<String> names = new ArrayList<>(headerNames);
			names.replaceAll((header) -> header.toLowerCase(Locale.ROOT));
			names.sort(null);
			field(this.out, lengthPrefix(names.size()));
			for (String header : names) {
				field(this.out, utf8(header));
				field(this.out, utf8(String.join(",", headerValues.apply(header))));
			}
			field(this.out, content);
		}

		public byte[] toByteArray() {
			return this.out.toByteArray();
		}

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
		digest.update(lengthPrefix(field.length));
		digest.update(field);
	}

	private static void field(ByteArrayOutputStream out, byte[] field) {
		out.writeBytes(lengthPrefix(field.length));
		out.writeBytes(field);
	}

	/**
	 * A field's length (or a count) as four bytes, big-endian: the prefix that keeps any
	 * two different sequences of fields apart.
	 */
	private static byte[] lengthPrefix(int length) {
		return new byte[] { (byte) (length >>> 24), (byte) (length >>> 16), (byte) (length >>> 8), (byte) length };
	}

	private static byte[] utf8(String text) {
		return text.getBytes(StandardCharsets.UTF_8);
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
