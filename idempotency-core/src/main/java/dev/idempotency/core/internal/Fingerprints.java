package dev.idempotency.core.internal;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
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

	/** Never updated: only copied ({@link #sha256()}). */
	private static final MessageDigest SHA_256 = newSha256();

	private static final String HEX_DIGITS = "0123456789ABCDEF";

	private Fingerprints() {
	}

	/**
	 * Fingerprint of an HTTP request: method, path, the query's parameters as the
	 * application receives them ({@link #decodedQuery}: decoded, sorted by name, the
	 * order of one name's values kept), the media type the body is sent as (normalised by
	 * the caller) and the body.
	 * @param query the query as sent, percent-encoded; {@code null} when there is none
	 * @param mediaType the body's media type in normal form, empty when none was sent
	 * @param body the body's bytes, or a normal form of them
	 */
	public static String http(String method, String path, @Nullable String query, String mediaType, byte[] body) {
		return digest(method, path, decodedQuery(query), mediaType, body, true);
	}

	/**
	 * Fingerprint of an HTTP request in the earlier format that compared the query as
	 * sent: its pairs sorted by their names as sent. Records made before the query was
	 * compared decoded hold it, so a retry of the same request is still recognised; it
	 * tells two requests apart only when no two names as sent are one name to the
	 * application ({@link #queryAsSentIsUnambiguous}). For a query without escapes it is
	 * {@link #http}.
	 */
	public static String httpWithQueryAsSent(String method, String path, @Nullable String query, String mediaType,
			byte[] body) {
		return digest(method, path, sortedQuery(query), mediaType, body, true);
	}

	/**
	 * Fingerprint of an HTTP request in the earliest format, without the media type:
	 * method, path, query sorted as sent ({@link #httpWithQueryAsSent}) and body. Records
	 * made before the media type was part of the fingerprint hold it, so a retry of the
	 * same request is still recognised.
	 */
	public static String httpWithoutMediaType(String method, String path, @Nullable String query, byte[] body) {
		return digest(method, path, sortedQuery(query), "", body, false);
	}

	/**
	 * The SHA-256 of an HTTP request's fields. The query as sent and the query decoded
	 * share one format, so that a query without escapes, the same in both, kept its
	 * fingerprint.
	 */
	private static String digest(String method, String path, String query, String mediaType, byte[] body,
			boolean withMediaType) {
		MessageDigest digest = sha256();
		update(digest, method.getBytes(StandardCharsets.UTF_8));
		update(digest, path.getBytes(StandardCharsets.UTF_8));
		update(digest, query.getBytes(StandardCharsets.UTF_8));
		if (withMediaType) {
			// Five fields where the earliest format had four: no input of one format is
			// an input of the other.
			update(digest, mediaType.getBytes(StandardCharsets.UTF_8));
		}
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

	/**
	 * The query as fingerprinted: its parameters as the application receives them, in a
	 * normal form. Each name and value is percent-decoded ({@code +} is a space, as the
	 * servlet container decodes a query), then written again with only what would be
	 * ambiguous escaped ({@code %}, {@code &} and {@code +}, and {@code =} in a name, as
	 * {@code %XX}; a space as {@code +}; a byte outside printable ASCII as {@code %XX}),
	 * so that two queries have one form exactly when the application receives the same
	 * parameters: {@code ?%61=1} is {@code ?a=1}, {@code ?q=a%20b} is {@code ?q=a+b}, and
	 * {@code ?v=1%262} ({@code v=[1&2]}) is not {@code ?v=1&2}. The pairs are then sorted
	 * by name, stably: the order of different names does not count, the order of one
	 * name's values does ({@code ?a=1&%61=2} is {@code a=[1, 2]}, not
	 * {@code ?%61=2&a=1}'s {@code a=[2, 1]}). A query without escapes keeps the form it
	 * had when the query was compared as sent ({@link #sortedQuery}), so its fingerprint
	 * did not change. A pair with an escape that does not decode (the container ignores
	 * it) is kept as sent.
	 */
	static String decodedQuery(@Nullable String query) {
		if (query == null || query.isEmpty()) {
			// Most mutations have none: nothing to decode, sort or join.
			return "";
		}
		List<QueryPair> pairs = new ArrayList<>();
		for (String pair : pairs(query)) {
			int equals = pair.indexOf('=');
			String rawName = (equals >= 0) ? pair.substring(0, equals) : pair;
			String name = normalised(rawName, true);
			String value = (equals >= 0) ? normalised(pair.substring(equals + 1), false) : "";
			if (name == null || value == null) {
				pairs.add(new QueryPair(rawName, pair));
			}
			else {
				pairs.add(new QueryPair(name, (equals >= 0) ? name + "=" + value : name));
			}
		}
		pairs.sort(Comparator.comparing(QueryPair::name));
		return String.join("&", pairs.stream().map(QueryPair::text).toList());
	}

	/**
	 * The query as the earlier formats fingerprinted it: its pairs as sent, sorted by
	 * their names as sent, stably.
	 */
	static String sortedQuery(@Nullable String query) {
		List<String> pairs = pairs(query);
		// A stable sort by name only: the values of one name keep the order they were
		// sent in.
		pairs.sort(Comparator.comparing(Fingerprints::parameterName));
		return String.join("&", pairs);
	}

	/**
	 * Whether the query sorted as sent ({@link #httpWithQueryAsSent}) tells this request
	 * apart from every request the application receives otherwise: no two names as sent
	 * decode to one name ({@code a} and {@code %61}, {@code a+b} and {@code a%20b}). When
	 * they do, sorting by the names as sent does not keep the order of that name's
	 * values.
	 */
	public static boolean queryAsSentIsUnambiguous(@Nullable String query) {
		Map<String, String> rawNames = new HashMap<>();
		for (String pair : pairs(query)) {
			String rawName = parameterName(pair);
			String name = normalised(rawName, true);
			if (name != null && !rawName.equals(rawNames.computeIfAbsent(name, (decoded) -> rawName))) {
				return false;
			}
		}
		return true;
	}

	private static List<String> pairs(@Nullable String query) {
		if (query == null || query.isEmpty()) {
			return new ArrayList<>();
		}
		List<String> pairs = new ArrayList<>(List.of(query.split("&")));
		pairs.removeIf(String::isEmpty);
		return pairs;
	}

	/**
	 * A name or value decoded and written again in normal form ({@link #decodedQuery});
	 * {@code null} if it has an escape that does not decode. A character outside ASCII
	 * sent unescaped (which Tomcat refuses) is kept as it is, so it never reads as an
	 * escaped byte.
	 */
	private static @Nullable String normalised(String text, boolean name) {
		StringBuilder out = new StringBuilder(text.length());
		for (int i = 0; i < text.length(); i++) {
			char c = text.charAt(i);
			if (c == '%') {
				int high = (i + 2 < text.length()) ? hexDigit(text.charAt(i + 1)) : -1;
				int low = (high >= 0) ? hexDigit(text.charAt(i + 2)) : -1;
				if (low < 0) {
					return null;
				}
				appendNormalised(out, (high << 4) | low, name);
				i += 2;
			}
			else if (c == '+' || c >= 0x80) {
				out.append(c);
			}
			else {
				appendNormalised(out, c, name);
			}
		}
		return out.toString();
	}

	/**
	 * An ASCII hex digit's value, else -1 ({@link Character#digit} takes the digits of
	 * other scripts too, which no container decodes).
	 */
	private static int hexDigit(char c) {
		if (c >= '0' && c <= '9') {
			return c - '0';
		}
		if (c >= 'a' && c <= 'f') {
			return c - 'a' + 10;
		}
		return (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
	}

	private static void appendNormalised(StringBuilder out, int octet, boolean name) {
		if (octet == ' ') {
			out.append('+');
		}
		else if (octet > ' ' && octet < 0x7f && octet != '%' && octet != '&' && octet != '+'
				&& (octet != '=' || !name)) {
			out.append((char) octet);
		}
		else {
			out.append('%').append(HEX_DIGITS.charAt(octet >> 4)).append(HEX_DIGITS.charAt(octet & 0xf));
		}
	}

	private static String parameterName(String pair) {
		int equals = pair.indexOf('=');
		return (equals >= 0) ? pair.substring(0, equals) : pair;
	}

	/** A query parameter as fingerprinted: its name, to sort by, and its text. */
	private record QueryPair(String name, String text) {

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

	/**
	 * A fresh SHA-256 digest: a copy of one that is never used, which costs less than
	 * asking the security providers for one on every call.
	 */
	private static MessageDigest sha256() {
		try {
			return (MessageDigest) SHA_256.clone();
		}
		catch (CloneNotSupportedException ex) {
			// a provider whose digest cannot be copied: asked for a new one
			return newSha256();
		}
	}

	private static MessageDigest newSha256() {
		try {
			return MessageDigest.getInstance("SHA-256");
		}
		catch (NoSuchAlgorithmException ex) {
			throw new IllegalStateException("SHA-256 is required of every Java platform", ex);
		}
	}

}
